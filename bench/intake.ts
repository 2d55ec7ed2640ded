// Intake (DESIGN §20, issue 44), against the local server that speaks GitHub's REST API:
// - a labelled issue to its running session: each issue labelled at a random point of the watch's
//   interval, from the label to its session's `created_at` (its process spawned); beside a bare loop of the bench's own that
//   polls the same list at the same interval with its ETag and spawns `sh -c true` when the label
//   shows (the floor of "notice by polling, then start something"). Target: interval_s + 2 s.
// - the requests per minute of 50 quiet watched repositories at interval_s 30, and how many of
//   them were 304s (all but each repository's first poll should be).
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGitHub, type GitHubServer } from '../test/helpers/github-server.ts';
import { call, FIXTURE_AGENT, startBenchDaemon, type BenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import type { Row } from './table.ts';

export interface IntakeOptions {
  template: string;
  /** issues labelled, one at a time */
  issues: number;
  interval_s: number;
  /** quiet repositories watched */
  repos: number;
  /** how long they are watched (s) */
  watch_s: number;
}

const TOKEN = 'ghp_test_token';

async function project(d: BenchDaemon, root: string, name: string): Promise<any> {
  const repo = path.join(root, name);
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-C', repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'x']);
  return call(d.api, 'POST', '/api/projects', { path: repo, name });
}

async function daemonFor(gh: GitHubServer, template: string) {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-intake-'));
  cpSync(template, path.join(home, 'data', 'pgdata'), { recursive: true });
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: { fixture: { command: [FIXTURE_AGENT, '{prompt}'] } }, github: { api_url: gh.url } }));
  return startBenchDaemon({ template: null, home, env: { GH_TOKEN: TOKEN } });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// The bare loop: the issues list with its ETag every interval; a label seen starts `sh -c true`.
async function bareLatency(gh: GitHubServer, repo: string, issues: number, intervalMs: number): Promise<number[]> {
  const out: number[] = [];
  let etag = '';
  let stop = false;
  const seen = new Set<number>();
  const labelledAt = new Map<number, number>();
  const loop = (async () => {
    while (!stop) {
      const res = await fetch(`${gh.url}/repos/${repo}/issues?labels=bare&state=open`, { headers: { authorization: `token ${TOKEN}`, ...(etag ? { 'if-none-match': etag } : {}) } });
      if (res.status === 200) {
        etag = res.headers.get('etag') ?? '';
        for (const i of (await res.json()) as Array<{ number: number }>) {
          if (seen.has(i.number)) continue;
          seen.add(i.number);
          await new Promise<void>((resolve) => spawn('sh', ['-c', 'true']).once('spawn', () => resolve()));
          out.push(Date.now() - labelledAt.get(i.number)!);
        }
      } else await res.arrayBuffer();
      await sleep(intervalMs);
    }
  })();
  for (let k = 0; k < issues; k++) {
    await sleep(Math.random() * intervalMs);
    const n = gh.addIssue(repo, { title: `bare ${k}` });
    labelledAt.set(n, Date.now());
    gh.label(repo, n, 'bare', 'wes');
    while (!seen.has(n)) await sleep(50);
  }
  stop = true;
  await loop;
  return out;
}

async function latency(gh: GitHubServer, opts: IntakeOptions) {
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-intake-repos-'));
  const d = await daemonFor(gh, opts.template);
  try {
    gh.addRepo('bench/latency');
    gh.setPermission('bench/latency', 'wes', 'write');
    const p = await project(d, root, 'latency');
    await call(d.api, 'POST', `/api/projects/${p.id}/intake`, { provider: 'github', repository: 'bench/latency', label: 'grove', interval_s: opts.interval_s, land: 'none', session: { prompt: 'echo:ok', agent: 'fixture' } });
    const grove: number[] = [];
    for (let k = 0; k < opts.issues; k++) {
      await sleep(Math.random() * opts.interval_s * 1000);
      const n = gh.addIssue('bench/latency', { title: `issue ${k}` });
      const at = Date.now();
      gh.label('bench/latency', n, 'grove', 'wes');
      let item: any;
      while (!(item = (await call(d.api, 'GET', `/api/projects/${p.id}/intake`)).items.find((i: any) => i.number === n && i.session_id))) await sleep(100);
      const s = await call(d.api, 'GET', `/api/sessions/${item.session_id}`);
      grove.push(Date.parse(s.created_at) - at);
    }
    const bare = await bareLatency(gh, 'bench/latency', opts.issues, opts.interval_s * 1000);
    return { grove: summarize(grove), bare: summarize(bare) };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

async function quiet(gh: GitHubServer, opts: IntakeOptions) {
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-intake-quiet-'));
  const d = await daemonFor(gh, opts.template);
  try {
    for (let i = 0; i < opts.repos; i++) {
      const repo = `quiet/r${i}`;
      gh.addRepo(repo);
      const p = await project(d, root, `q${i}`);
      await call(d.api, 'POST', `/api/projects/${p.id}/intake`, { provider: 'github', repository: repo, label: 'grove', interval_s: 30, session: { agent: 'fixture' } });
    }
    gh.clearRequests();
    const t0 = Date.now();
    await sleep(opts.watch_s * 1000);
    const minutes = (Date.now() - t0) / 60_000;
    const seen = gh.requests.filter((r) => r.path.startsWith('/repos/quiet/'));
    return { requests: seen.length, per_minute: round(seen.length / minutes), not_modified: seen.filter((r) => r.status === 304).length, ideal_per_minute: round(opts.repos * 2) };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export async function benchIntake(opts: IntakeOptions) {
  const gh = await startGitHub();
  try {
    return { interval_s: opts.interval_s, issues: opts.issues, repos: opts.repos, latency_ms: await latency(gh, opts), quiet: await quiet(gh, opts) };
  } finally {
    await gh.close();
  }
}

export function intakeRows(r: Awaited<ReturnType<typeof benchIntake>>): Row[] {
  const { latency_ms: l, quiet: q } = r;
  return [
    {
      what: `intake: a labelled issue to its session's created_at at interval_s ${r.interval_s} vs a bare ETag poll at that interval spawning sh (ms, p99 of ${r.issues}; p50 ${round(l.grove.median)} vs ${round(l.bare.median)})`,
      grove: round(l.grove.p99),
      base: round(l.bare.p99),
      ratio: round(l.grove.p99 / Math.max(l.bare.p99, 1)),
      target: { op: '≤', limit: (r.interval_s + 2) * 1000, of: 'ms' },
    },
    {
      what: `intake: requests per minute of ${r.repos} quiet watched repositories at interval_s 30 vs one poll each per interval (${q.not_modified} of ${q.requests} were 304s)`,
      grove: q.per_minute,
      base: q.ideal_per_minute,
      ratio: round(q.per_minute / q.ideal_per_minute),
    },
  ];
}
