// The sandbox's network (DESIGN §18): a confined start and a 50 MB download, each beside the
// same thing unconfined, in alternating rounds. Confined is what a session runs: `grove
// sandbox-net` (the built CLI) around bwrap with the worktree's policy, socat's listeners inside.
// - start: from the spawn to the end of `true`, confined vs unconfined (bwrap alone, with the
//   same filesystem policy and no network layer, and `node -e 0` shown beside them); target ≤
//   unconfined + 150 ms.
// - download: curl's own time for 50 MB from a node:http server on loopback, inside through the
//   proxy and through the loopback entry's own port, vs the same curl unconfined; ratio = rate,
//   target ≥ 0.8.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseNetworkEntry } from '../daemon/sandbox/allow.ts';
import { bwrapArgv } from '../daemon/sandbox/bwrap.ts';
import { checkSandbox } from '../daemon/sandbox/check.ts';
import { netPlan, sandboxNetArgv } from '../daemon/sandbox/net.ts';
import { policyFor } from '../daemon/sandbox/policy.ts';
import { makeTempDir } from '../test/helpers/git.ts';
import { BIG_BYTES, naming } from '../test/helpers/http.ts';
import { sandboxFixture } from '../test/helpers/sandbox.ts';
import { call, fixtureHome, readyTask, ROOT, rssMb, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import type { Row } from './table.ts';

// From the spawn of `argv` to its exit, which must be 0; and its stdout.
function timeRun(argv: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.once('error', reject);
    p.once('close', (code) => (code === 0 ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`${argv.join(' ')} exited ${code}`))));
  });
}

export async function benchSandbox(opts: { starts: number; downloads: number }) {
  const cleanups: Array<() => unknown> = [];
  const c = { after: (fn: () => unknown) => void cleanups.push(fn) };
  try {
    const PATH = process.env.PATH ?? '/usr/bin:/bin';
    const check = await checkSandbox({ path: PATH });
    if (!check.ok) throw new Error(`the sandbox bench needs a machine that confines: ${check.detail}`);
    const socat = check.socat;
    const f = sandboxFixture(c);
    const p = policyFor(f.input);
    if (!p.ok) throw new Error(p.message);
    const port = await naming(c, 'bench');
    const allow = [parseNetworkEntry(`127.0.0.1:${port}`)!];
    const dir = makeTempDir(c, 'grove-bench-net-');
    const record = path.join(makeTempDir(c, 'grove-bench-net-record-'), 'blocked.jsonl');
    const env = { PATH, HOME: f.home };
    const grove = [process.execPath, path.join(ROOT, 'bin', 'grove.js')];
    const confined = (command: string[]) => [...sandboxNetArgv({ grove, dir, record, allow }), ...bwrapArgv(check.bwrap, p.policy, command, { plan: netPlan(dir, allow), socat })];
    const fsOnly = (command: string[]) => bwrapArgv(check.bwrap, p.policy, command);

    const starts = {
      unconfined: () => timeRun(['true'], env),
      bwrap: () => timeRun(fsOnly(['true']), env),
      node: () => timeRun([process.execPath, '-e', '0'], env),
      confined: () => timeRun(confined(['true']), env),
    };
    const startMs: Record<string, number[]> = { unconfined: [], bwrap: [], node: [], confined: [] };
    for (const go of Object.values(starts)) await go();
    for (let i = 0; i < opts.starts; i++) for (const [k, go] of Object.entries(starts)) startMs[k]!.push((await go()).ms);

    // curl's own time for the whole download (its start left out), in seconds.
    const curl = (...args: string[]) => ['curl', '-sS', '-o', '/dev/null', '-w', '%{time_total} %{size_download}\\n', ...args, `http://127.0.0.1:${port}/big`];
    const seconds = async (argv: string[]) => {
      const [time, size] = (await timeRun(argv, env)).out.trim().split(' ');
      if (Number(size) !== BIG_BYTES) throw new Error(`the download was ${size} bytes`);
      return Number(time) * 1000;
    };
    const downloads = {
      unconfined: () => seconds(curl('--noproxy', '*')),
      proxied: () => seconds(confined(curl())),
      direct: () => seconds(confined(curl('--noproxy', '*'))),
    };
    const downMs: Record<string, number[]> = { unconfined: [], proxied: [], direct: [] };
    for (const go of Object.values(downloads)) await go();
    for (let i = 0; i < opts.downloads; i++) for (const [k, go] of Object.entries(downloads)) downMs[k]!.push(await go());

    const s = Object.fromEntries(Object.entries(startMs).map(([k, v]) => [k, summarize(v)]));
    const d = Object.fromEntries(Object.entries(downMs).map(([k, v]) => [k, summarize(v)]));
    return {
      start_ms: s,
      start_added_p50_ms: round(s.confined!.median - s.unconfined!.median),
      start_ratio_p50: round(s.confined!.median / s.unconfined!.median),
      download_ms: d,
      download_mb: BIG_BYTES / 2 ** 20,
      // rates: unconfined time / confined time
      proxied_rate_ratio: round(d.unconfined!.median / d.proxied!.median),
      direct_rate_ratio: round(d.unconfined!.median / d.direct!.median),
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
  }
}

// The daemon's memory with `n` agent sessions running confined vs unconfined (DESIGN §18: within
// 10%), in alternating rounds on one daemon: each round starts `n` sessions that sleep, waits for
// them to run, samples the daemon's RSS, then kills them.
export async function benchSandboxRss(opts: { template: string; sessions: number; rounds: number }) {
  const home = fixtureHome(opts.template);
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-rss-'));
  const d = await startBenchDaemon({ template: null, home });
  try {
    const { task } = await readyTask(d.api, root, 'rss');
    const round_ = async (sandbox: boolean): Promise<number> => {
      const started = await Promise.all(Array.from({ length: opts.sessions }, () => call(d.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: 'sleep:120', sandbox })));
      for (const s of started) {
        if (s.sandbox.confined !== sandbox) throw new Error(`session ${s.id} is ${s.sandbox.confined ? '' : 'not '}confined`);
        while ((await call(d.api, 'GET', `/api/sessions/${s.id}`)).status !== 'running') await new Promise((r) => setTimeout(r, 50));
      }
      const samples = [];
      for (let i = 0; i < 5; i++) {
        samples.push(rssMb(d.pid));
        await new Promise((r) => setTimeout(r, 200));
      }
      await Promise.all(started.map((s) => call(d.api, 'DELETE', `/api/sessions/${s.id}`)));
      return summarize(samples).median;
    };
    const rss: Record<'confined' | 'unconfined', number[]> = { confined: [], unconfined: [] };
    for (let i = 0; i < opts.rounds; i++) {
      rss.unconfined.push(await round_(false));
      rss.confined.push(await round_(true));
    }
    const c = summarize(rss.confined).median;
    const u = summarize(rss.unconfined).median;
    return { sessions: opts.sessions, rss_mb: { confined: c, unconfined: u }, ratio: round(c / u) };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export function sandboxRssRows(r: Awaited<ReturnType<typeof benchSandboxRss>>): Row[] {
  return [
    {
      what: `daemon RSS with ${r.sessions} agent sessions running, confined vs unconfined (MB, median)`,
      grove: r.rss_mb.confined,
      base: r.rss_mb.unconfined,
      ratio: r.ratio,
      target: { op: '≤', limit: 1.1, of: 'ratio' },
    },
  ];
}

export function sandboxRows(r: Awaited<ReturnType<typeof benchSandbox>>): Row[] {
  const s = r.start_ms;
  const d = r.download_ms;
  return [
    {
      what: `confined start (grove sandbox-net + bwrap + socat) of true vs unconfined (ms, p50 of ${s.confined!.n})`,
      grove: s.confined!.median,
      base: s.unconfined!.median,
      ratio: r.start_ratio_p50,
      target: { op: '≤', limit: 150, of: 'ms beyond' },
    },
    { what: 'bwrap alone (the filesystem policy, no network layer) of true vs unconfined (ms, p50)', grove: s.bwrap!.median, base: s.unconfined!.median, ratio: round(s.bwrap!.median / s.unconfined!.median) },
    { what: "the confined start vs bwrap alone + node -e 0 (the runner's floor: a Node process) (ms, p50)", grove: s.confined!.median, base: s.bwrap!.median + s.node!.median, ratio: round(s.confined!.median / (s.bwrap!.median + s.node!.median)) },
    {
      what: `${r.download_mb} MB from a loopback server, confined through the proxy vs unconfined (curl's ms, median of ${d.proxied!.n}; ratio = rate)`,
      grove: d.proxied!.median,
      base: d.unconfined!.median,
      ratio: r.proxied_rate_ratio,
      target: { op: '≥', limit: 0.8, of: 'ratio' },
    },
    { what: `the same through the loopback entry's own port inside vs unconfined (ratio = rate)`, grove: d.direct!.median, base: d.unconfined!.median, ratio: r.direct_rate_ratio, target: { op: '≥', limit: 0.8, of: 'ratio' } },
  ];
}

// `npm run build && node --import tsx bench/sandbox.ts [--quick]`: this part alone.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'sandbox.ts')) {
  const { judge, printTable } = await import('./table.ts');
  const quick = process.argv.includes('--quick');
  const r = await benchSandbox({ starts: quick ? 10 : 20, downloads: quick ? 3 : 7 });
  console.log(JSON.stringify(r, null, 2));
  printTable(judge(sandboxRows(r)));
}
