// Spawning processes for benchmarks: the daemon, and a baseline process, until a stdout line says ready.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

export const ROOT = path.resolve(import.meta.dirname, '..');

// The daemon as `npm start` runs it (the built `bin/grove.js daemon` with its V8 flags): the
// arguments of package.json's start script after its `node`.
const start: string[] = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start.split(' ');
if (start[0] !== 'node') throw new Error(`npm start does not run node: ${start.join(' ')}`);
export const DAEMON_ARGS = start.slice(1);

// The daemon's resident memory: its process (its worker threads included) and its store's
// process (PGlite), its child; not the sessions' processes, also its children.
export function rssMb(pid: number): number {
  const rss = (p: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  const store = children.filter((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes(path.join('store', 'driver', 'worker.js'));
    } catch {
      return false; // ended meanwhile
    }
  });
  return store.reduce((sum, c) => sum + rss(c), rss(pid));
}

// Spawns `node args…` and resolves when a stdout line matches, with the elapsed ms.
export function spawnUntil(args: string[], env: NodeJS.ProcessEnv, match: (line: string) => boolean, cwd = ROOT) {
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise<{ ms: number; line: string; proc: ChildProcess }>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (match(line)) resolve({ ms: performance.now() - t0, line, proc });
    });
    proc.once('exit', (c) => reject(new Error(`exited ${c} before ready: ${args.join(' ')}`)));
  });
}

export function stopProcess(proc: ChildProcess, how: 'signal' | 'stdin'): Promise<void> {
  return new Promise((resolve) => {
    proc.removeAllListeners('exit');
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    if (how === 'signal') proc.kill('SIGTERM');
    else proc.stdin!.end();
  });
}

export interface BenchDaemon {
  home: string;
  pid: number;
  socketPath: string;
  port: number | null;
  api: Pool;
  stop(opts?: { keepHome?: boolean }): Promise<void>;
}

// A daemon in a temporary GROVE_HOME whose store is copied from `template` (or made new).
export async function startBenchDaemon(opts: {
  template: string | null;
  /** an existing GROVE_HOME (a restart); default a new one */
  home?: string;
  port?: boolean;
  env?: Record<string, string>;
  /** the checkout whose built daemon runs (another one's, for a side-by-side baseline); default this one */
  checkout?: string;
}): Promise<BenchDaemon & { startMs: number; readyLine: string }> {
  const home = opts.home ?? mkdtempSync(path.join(tmpdir(), 'grove-bench-'));
  if (opts.template && !opts.home) cpSync(opts.template, path.join(home, 'data', 'pgdata'), { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, GROVE_HOME: home, GROVE_PORT: opts.port ? '0' : 'off', GROVE_LOG_LEVEL: 'info', ...(opts.env ?? {}) };
  // GROVE_BENCH_PROFILE=<folder>: CPU profiles of every bench daemon (all its threads) there.
  const prof = process.env.GROVE_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.GROVE_BENCH_PROFILE}`] : [];
  const { ms, line, proc } = await spawnUntil([...prof, ...DAEMON_ARGS], env, (l) => l.includes('grove daemon ready'), opts.checkout);
  const ready = JSON.parse(line) as { socket: string; port: number | null };
  const api = new Pool('http://localhost', { socketPath: ready.socket, connections: 64 });
  return {
    home,
    pid: proc.pid!,
    socketPath: ready.socket,
    port: ready.port,
    api,
    startMs: ms,
    readyLine: line,
    async stop(opts: { keepHome?: boolean } = {}) {
      await api.close();
      await stopProcess(proc, 'signal');
      if (!opts.keepHome) rmSync(home, { recursive: true, force: true });
    },
  };
}

// One JSON request to the daemon; throws on an unexpected status.
export async function call(api: Pool, method: string, urlPath: string, body?: unknown): Promise<any> {
  const res = await api.request({
    method: method as 'GET',
    path: urlPath,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${urlPath}: ${res.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// A store as a daemon leaves it (initialised and migrated), for "existing store" measurements.
export async function makeMigratedStore(dest: string): Promise<void> {
  const d = await startBenchDaemon({ template: null });
  await d.stop({ keepHome: true });
  cpSync(path.join(d.home, 'data', 'pgdata'), dest, { recursive: true });
  rmSync(d.home, { recursive: true, force: true });
}

// The fixture agent, for benchmarks that run sessions.
export const FIXTURE_AGENT = path.join(ROOT, 'test', 'fixtures', 'agent.sh');

// A GROVE_HOME with a copy of `template` and a user config that defines the fixture agent.
export function fixtureHome(template: string): string {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-'));
  cpSync(template, path.join(home, 'data', 'pgdata'), { recursive: true });
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: { fixture: { command: [FIXTURE_AGENT, '{prompt}'] } } }));
  return home;
}

// An empty one-commit repository in `root`, added as a project, with one ready task.
export async function readyTask(api: Pool, root: string, name: string): Promise<{ repo: string; task: any }> {
  const repo = path.join(root, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-C', repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'x']);
  const project = await call(api, 'POST', '/api/projects', { path: repo });
  return { repo, task: await call(api, 'POST', '/api/tasks', { project_id: project.id, name }) };
}
