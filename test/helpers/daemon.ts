import './env.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { Pool, request } from 'undici';
import { guardHome } from './leaks.ts';
import { storeUrlFor } from './postgres.ts';
import { seedStore } from './template.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
// The entry users run (npm start, the service): `grove daemon`, from the build in dist/ (npm
// test builds first), with the V8 flags npm start and the service use.
export const DAEMON_ENTRY = path.join(ROOT, 'bin', 'grove.js');
export const DAEMON_ARGS = ['--liftoff-only', '--max-semi-space-size=4', '--v8-pool-size=1', DAEMON_ENTRY, 'daemon'];

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface RequestOptions {
  /** An object is sent as JSON with Content-Type application/json; a string or Buffer is sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestDaemon {
  home: string;
  socketPath: string;
  port: number | null;
  proc: ChildProcess;
  /** every stdout line the daemon printed, parsed when it was JSON */
  logs: any[];
  stderr(): string;
  socket(method: string, urlPath: string, opts?: RequestOptions): Promise<Reply>;
  tcp(method: string, urlPath: string, opts?: RequestOptions): Promise<Reply>;
  /** resolves with the first log record (past or future) that matches */
  waitForLog(pred: (rec: any) => boolean, timeoutMs?: number): Promise<any>;
  /** resolves with the exit code (or signal name) once the process is gone */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface StartOptions {
  /** reuse a home (restart); default: a new temporary one, removed after the test */
  home?: string;
  env?: Record<string, string | undefined>;
  /** skip copying the template store (to test a brand-new store) */
  noSeed?: boolean;
  /** the user config, written to the home's config.json before the start */
  config?: object;
}

// A new GROVE_HOME under the temp folder, short enough for a socket path.
// What a helper needs of a test: somewhere to register cleanup (a TestContext, or a file's scope).
export interface Cleanup {
  after(fn: () => unknown): void;
}

export function makeHome(t: Cleanup): string {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-h-')));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  // What runs for it must be gone by the file's end (the leak guard, test/helpers/leaks.ts).
  guardHome(home, (t as { fullName?: string }).fullName ?? '');
  return home;
}

// Something made once for the tests of a file (a daemon, a team): by the first test that asks,
// with a cleanup that runs after the file's last test. Call it at the top level of the file, so
// that the cleanup belongs to the file and not to a test.
export function sharedForFile<T>(make: (c: Cleanup) => Promise<T>): () => Promise<T> {
  const cleanups: Array<() => unknown> = [];
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  let made: Promise<T> | null = null;
  const c: Cleanup = { after: (fn) => cleanups.push(fn) };
  return () => (made ??= make(c));
}

// One daemon for the tests of a file (with `opts`, if given), stopped (and its home removed)
// after the file's last test. `opts` may be a function of the file's cleanup, for a home (a
// user config) made when the daemon starts.
export function sharedDaemon(opts: StartOptions | ((c: Cleanup) => StartOptions) = {}): () => Promise<TestDaemon> {
  return sharedForFile((c) => startDaemon(c, typeof opts === 'function' ? opts(c) : opts));
}

// Spawns the real daemon entry point as a process and waits for its "ready" log line.
// Test files run side by side, and their daemons' stores cannot see each other's port leases: a
// port leased by one and not yet listened on binds free for another, and the later service dies
// on EADDRINUSE. So each test process takes its own block of the default range, unless the home's
// config names a range (or is not JSON: a test of a bad config).
const PORT_BLOCK = 200;
function ownPortRange(home: string): void {
  const file = path.join(home, 'config.json');
  let config: unknown = {};
  try {
    config = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config) || 'port_range' in config) return;
  const from = 20000 + (process.pid % (10000 / PORT_BLOCK)) * PORT_BLOCK;
  writeFileSync(file, JSON.stringify({ ...config, port_range: [from, from + PORT_BLOCK - 1] }));
}

export function spawnDaemon(
  home: string,
  env: Record<string, string | undefined> = {},
): { proc: ChildProcess; logs: any[]; events: EventEmitter; ready: Promise<any>; exited: Promise<number | string>; stderr: () => string } {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, GROVE_HOME: home, GROVE_PORT: '0', GROVE_LOG_LEVEL: 'debug' };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete fullEnv[k];
    else fullEnv[k] = v;
  }
  ownPortRange(home);
  guardHome(home);
  const proc = spawn(process.execPath, DAEMON_ARGS, { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
  const logs: any[] = [];
  const events = new EventEmitter();
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const ready = new Promise<any>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      let rec: any = line;
      try {
        rec = JSON.parse(line);
      } catch {
        // not JSON: keep the raw line
      }
      logs.push(rec);
      events.emit('log', rec);
      if (rec?.msg === 'grove daemon ready') resolve(rec);
    });
    void exited.then((code) => reject(new Error(`daemon exited (${code}) before ready: ${stderr}`)));
  });
  ready.catch(() => {});
  return { proc, logs, events, ready, exited, stderr: () => stderr };
}

// Starts a daemon for one test; t.after stops it (TERM, then KILL) and removes its home.
export async function startDaemon(t: Cleanup, opts: StartOptions = {}): Promise<TestDaemon> {
  const home = opts.home ?? makeHome(t);
  if (opts.config) writeFileSync(path.join(home, 'config.json'), JSON.stringify(opts.config));
  // On PostgreSQL (npm run test:postgres) the home's own database, unless the test names one.
  const url = await storeUrlFor(home);
  const env = url === null ? opts.env : { GROVE_DATABASE_URL: url, ...opts.env };
  const onPglite = !env?.GROVE_DATABASE_URL;
  if (onPglite && !opts.noSeed && !existsSync(path.join(home, 'data', 'pgdata'))) await seedStore(path.join(home, 'data'));
  const { proc, logs, events, ready, exited, stderr } = spawnDaemon(home, env);
  t.after(() => stopProcess(proc, exited));
  const info = await ready;
  const socketPath: string = info.socket;
  const port: number | null = info.port;
  // A pool, not one Client: a request held up (a slow task) must not queue the others behind it.
  const client = new Pool('http://localhost', { socketPath, connections: 32 });
  t.after(() => client.close());

  return {
    home,
    socketPath,
    port,
    proc,
    logs,
    stderr,
    exited,
    socket: (method, urlPath, o) => send(client, 'http://localhost', method, urlPath, o),
    tcp: (method, urlPath, o) => {
      if (port === null) throw new Error('this daemon has no TCP front');
      return send(null, `http://127.0.0.1:${port}`, method, urlPath, o);
    },
    stop: (signal = 'SIGTERM') => stopProcess(proc, exited, signal),
    waitForLog: (pred, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const past = logs.find(pred);
        if (past) return resolve(past);
        const timer = setTimeout(() => {
          events.off('log', onLog);
          reject(new Error('timed out waiting for a log record'));
        }, timeoutMs);
        const onLog = (rec: any) => {
          if (!pred(rec)) return;
          clearTimeout(timer);
          events.off('log', onLog);
          resolve(rec);
        };
        events.on('log', onLog);
      }),
  };
}

async function send(client: Pool | null, origin: string, method: string, urlPath: string, o: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  let body: string | Buffer | undefined;
  if (typeof o.body === 'string' || Buffer.isBuffer(o.body)) body = o.body;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const opts = { method: method as 'GET', headers, body };
  const res = client ? await client.request({ ...opts, path: urlPath, origin }) : await request(origin + urlPath, opts);
  const text = await res.body.text();
  let json: any;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

// TERM, then KILL if it lingers; resolves with the exit code or signal.
export async function stopProcess(proc: ChildProcess, exited: Promise<number | string>, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> {
  if (proc.exitCode === null && proc.signalCode === null) {
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }
  return exited;
}

// Adds `repo` as a project and returns it.
// Removes a project from a daemon that outlives the test: its tasks archived first (else the
// removal is refused and its warm pool goes on writing in the repository), then the project.
export async function removeProject(d: TestDaemon, id: string): Promise<void> {
  for (const task of (await d.socket('GET', `/api/tasks?project_id=${id}`)).json) await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  const r = await d.socket('DELETE', `/api/projects/${id}`);
  if (r.status !== 204 && r.status !== 404) throw new Error(`removing project ${id}: ${r.text}`);
}

export async function addProject(d: TestDaemon, repo: string): Promise<any> {
  const r = await d.socket('POST', '/api/projects', { body: { path: repo } });
  if (r.status !== 201) {
    // A 500's detail is in the daemon's log only: name it, so that a failure here can be read.
    const logged = d.logs.filter((l) => typeof l === 'object' && l?.level >= 50).map((l) => JSON.stringify(l));
    throw new Error(`adding ${repo}: ${r.text}${logged.length ? `\ndaemon errors:\n${logged.join('\n')}` : ''}`);
  }
  return r.json;
}
