// The person in the loop (DESIGN §15): how soon an agent's request is a pending approval on
// /api/events, and how soon an allow reaches the agent, through the real Claude Code bridge
// (`grove approval-mcp`) driven by the MCP SDK's client as Claude Code drives it. The baseline is
// the same MCP round trip to a stdio server that answers at once (instant-mcp.mjs): the agent's
// own cost of asking a permission prompt tool.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Approval } from '../schemas/approval.ts';
import { withCalls } from '../daemon/client/calls.ts';
import { createTransport } from '../daemon/client/transport.ts';
import { call, fixtureHome, readyTask, ROOT, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { judge, printTable, type Row } from './table.ts';

// An MCP client on a stdio server, as Claude Code connects to its permission prompt tool.
async function connect(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'claude-code-bench', version: '1' });
  await client.connect(new StdioClientTransport({ command, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'inherit' }));
  return client;
}

const ask = (client: Client, i: number) =>
  client.callTool({ name: 'approve', arguments: { tool_name: 'Bash', input: { command: `echo ${i}` }, tool_use_id: `toolu_bench_${i}` } }, undefined, { timeout: 60_000 });

export async function benchApprovals(opts: { template: string; rounds: number }) {
  const home = fixtureHome(opts.template);
  const d = await startBenchDaemon({ template: null, home });
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-approvals-'));
  const fifo = path.join(root, 'gate');
  execFileSync('mkfifo', [fifo]);
  const api = withCalls(createTransport(d.socketPath));
  let bridge: Client | null = null;
  let instant: Client | null = null;
  let events: (AsyncIterable<Buffer> & { destroy(): void }) | null = null;
  let session: { id: string } | null = null;
  try {
    // A session held running (the ask API asks for live sessions only), and its bridge.
    const { task } = await readyTask(d.api, root, 'approvals');
    session = await call(d.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: `wait:${fifo}` });
    bridge = await connect(process.execPath, [path.join(ROOT, 'bin', 'grove.js'), 'approval-mcp', '--session', session!.id], { GROVE_SOCKET: d.socketPath });
    instant = await connect(process.execPath, [path.join(ROOT, 'bench', 'instant-mcp.mjs')], {});

    // The approval.requested events as they come, by key: each round waits for its own.
    const waiting = new Map<string, (a: Approval) => void>();
    const from = (await call(d.api, 'GET', '/api/health')).last_event_seq;
    const followed = await api.events(from, { task_id: task.id });
    events = followed.body;
    const reading = (async () => {
      for await (const { event, data } of followed.events) {
        if (event !== 'approval.requested') continue;
        const a = data.data as Approval;
        waiting.get(a.key)?.(a);
      }
    })().catch(() => {});
    const requested = (key: string) => new Promise<Approval>((resolve) => waiting.set(key, resolve));

    const seen: number[] = [];
    const answered: number[] = [];
    const raw: number[] = [];
    // Uncounted warm-up rounds of both, then rounds that alternate.
    const warm = 3;
    for (let i = 0; i < opts.rounds + warm; i++) {
      const key = `toolu_bench_${i}`;
      const shown = requested(key);
      const t0 = performance.now();
      const asked = ask(bridge, i);
      const a = await shown;
      const t1 = performance.now();
      await api.decide(a.id, { nonce: a.nonce, decision: 'allow' });
      const r = (await asked) as { content: Array<{ text: string }> };
      const t2 = performance.now();
      if (JSON.parse(r.content[0]!.text).behavior !== 'allow') throw new Error(`round ${i}: not allowed: ${r.content[0]!.text}`);
      waiting.delete(key);
      const b0 = performance.now();
      await ask(instant, i);
      const b1 = performance.now();
      if (i < warm) continue;
      seen.push(t1 - t0);
      answered.push(t2 - t1);
      raw.push(b1 - b0);
    }
    events.destroy();
    await reading;
    const s = { requested_to_event_ms: summarize(seen), allow_to_answer_ms: summarize(answered), raw_round_trip_ms: summarize(raw) };
    return {
      rounds: opts.rounds,
      ...s,
      // Beyond the agent's own round trip: what grove adds between the allow and the tool running.
      allow_beyond_raw_ms: { median: round(s.allow_to_answer_ms.median - s.raw_round_trip_ms.median), p99: round(s.allow_to_answer_ms.p99 - s.raw_round_trip_ms.p99) },
      ratio_requested_p99: round(s.requested_to_event_ms.p99 / s.raw_round_trip_ms.p99),
      ratio_allow_p99: round(s.allow_to_answer_ms.p99 / s.raw_round_trip_ms.p99),
    };
  } finally {
    events?.destroy();
    await bridge?.close();
    await instant?.close();
    await api.close();
    if (session) await call(d.api, 'DELETE', `/api/sessions/${session.id}`);
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

// Issue 28: an agent's request visible as a pending approval, and an allow reaching the agent,
// against the same MCP round trip to a server that answers at once.
export function approvalRows(a: Awaited<ReturnType<typeof benchApprovals>>): Row[] {
  return [
    {
      what: `approval: the agent's request to approval.requested on /api/events, through grove approval-mcp, vs an MCP round trip answered at once (ms, p99 of ${a.rounds})`,
      grove: a.requested_to_event_ms.p99,
      base: a.raw_round_trip_ms.p99,
      ratio: a.ratio_requested_p99,
      target: { op: '≤', limit: 100, of: 'ms' },
    },
    {
      what: `approval: POST allow to the tool call's answer vs the same MCP round trip answered at once (ms, p99 of ${a.rounds})`,
      grove: a.allow_to_answer_ms.p99,
      base: a.raw_round_trip_ms.p99,
      ratio: a.ratio_allow_p99,
      target: { op: '≤', limit: 100, of: 'ms beyond' },
    },
    { what: 'approval: the same request to approval.requested (ms, p50)', grove: a.requested_to_event_ms.median, base: a.raw_round_trip_ms.median, ratio: round(a.requested_to_event_ms.median / a.raw_round_trip_ms.median) },
    { what: 'approval: the same POST allow to the answer (ms, p50)', grove: a.allow_to_answer_ms.median, base: a.raw_round_trip_ms.median, ratio: round(a.allow_to_answer_ms.median / a.raw_round_trip_ms.median) },
  ];
}

// `npm run build && node --import tsx bench/approvals.ts [--quick]`: this part alone, as in the full run.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'approvals.ts')) {
  const { makeMigratedStore } = await import('./daemon.ts');
  const tpl = mkdtempSync(path.join(tmpdir(), 'grove-bench-tpl-'));
  try {
    await makeMigratedStore(path.join(tpl, 'pgdata'));
    const result = await benchApprovals({ template: path.join(tpl, 'pgdata'), rounds: process.argv.includes('--quick') ? 30 : 200 });
    console.log(JSON.stringify(result, null, 2));
    printTable(judge(approvalRows(result)));
  } finally {
    rmSync(tpl, { recursive: true, force: true });
  }
}
