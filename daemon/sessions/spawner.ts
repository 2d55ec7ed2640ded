import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { LineLogger } from '../log.ts';
import { isSameProcessAlive, processStartTime } from '../proc.ts';
import { ROOT } from '../root.ts';
import { wrapperArgv, type SessionFiles } from './wrapper.ts';

const ENTRY = path.join(ROOT, 'daemon', 'sessions', 'spawner.mjs');

export type SpawnResult =
  | {
      ok: true;
      pid: number;
      /** lets the held wrapper run the agent (once the session is stored) */
      go(): void;
      /** 'exited' once the process has exited; 'unknown' when nothing will say so (then poll) */
      exited: Promise<'exited' | 'unknown'>;
    }
  | { ok: false; message: string };

export interface SessionSpawner {
  start(opts: { files: SessionFiles; command: string[]; cwd: string; env: Record<string, string> }): Promise<SpawnResult>;
  close(): Promise<void>;
}

/** A command run through the spawner: `error` when it could not be started. */
export interface RunResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  error: string | null;
  /** the spawner exited while it ran: its outcome is unknown (it has ended by now) */
  lost?: boolean;
}

type FromSpawner =
  | { type: 'running'; id: number; pid: number }
  | ({ type: 'ran'; id: number } & RunResult)
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'failed'; id: number; stage: 'files' | 'spawn'; code: string | null; message: string }
  | { type: 'exit'; pid: number; code: number | null; signal: string | null };

export type Spawner = SessionSpawner & {
  launch(): void;
  /** runs a short command from the spawner; null when there is no spawner (run it yourself) */
  run(file: string, args: string[], opts: { env: Record<string, string> }): Promise<RunResult | null>;
};

// How often a command whose spawner died is checked for having ended: it is not our child, so
// nothing reports its exit.
const ORPHAN_POLL_MS = 25;

// The session spawner (spawner.mjs), forked by launch(): call it before PGlite is loaded, as
// forking gets slower with every page the daemon has. Without the spawner (not launched,
// failed, or killed), sessions are spawned by the daemon itself, as before, only slower.
export function createSpawner(opts: { log: LineLogger }): Spawner {
  const { log } = opts;
  let proc: ChildProcess | null = null;
  type Opts = Parameters<SessionSpawner['start']>[0];
  const pending = new Map<number, { opts: Opts; resolve: (r: SpawnResult) => void; reject: (e: Error) => void }>();
  const exits = new Map<number, (how: 'exited' | 'unknown') => void>();
  const runs = new Map<number, { resolve: (r: RunResult) => void; pid: number | null; start: string | null }>();
  let nextId = 1;
  let closed = false;

  function onMessage(m: FromSpawner): void {
    if (m.type === 'running' || m.type === 'ran') {
      const r = runs.get(m.id);
      if (!r) return;
      if (m.type === 'running') {
        r.pid = m.pid;
        r.start = processStartTime(m.pid);
        return;
      }
      runs.delete(m.id);
      r.resolve({ code: m.code, signal: m.signal, stdout: m.stdout, stderr: m.stderr, error: m.error });
      return;
    }
    if (m.type === 'exit') {
      exits.get(m.pid)?.('exited');
      exits.delete(m.pid);
      return;
    }
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.type === 'spawned') {
      const pid = m.pid;
      const go = () => void (proc?.connected && proc.send({ op: 'go', pid }));
      p.resolve({ ok: true, pid, go, exited: new Promise((r) => exits.set(pid, r)) });
    } else if (m.stage === 'files') {
      p.reject(Object.assign(new Error(`the output files of the session could not be opened: ${m.message}`), { code: m.code ?? undefined }));
    } else {
      p.resolve({ ok: false, message: m.message });
    }
  }

  function onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (!closed) log.warn({ code, signal }, 'the session spawner exited; the daemon spawns sessions itself');
    proc = null;
    // A start it did not answer is made here instead: a wrapper it may have spawned was held,
    // and its stdin closed with the spawner, so it has run nothing.
    for (const p of pending.values()) startHere(p.opts).then(p.resolve, p.reject);
    pending.clear();
    // Its children live on: nothing will report their exit now but their pid going away.
    for (const settle of exits.values()) settle('unknown');
    exits.clear();
    // A command it was running may still be at work (a git in a hook): it fails, but only once
    // it has ended, so that what the caller undoes is not being made at the same moment.
    for (const r of runs.values()) {
      const lost = () => r.resolve({ code: null, signal: null, stdout: '', stderr: '', error: 'the session spawner exited while the command ran', lost: true });
      const { pid, start } = r;
      if (pid === null || start === null || !isSameProcessAlive(pid, start)) {
        lost();
        continue;
      }
      const timer = setInterval(() => {
        if (isSameProcessAlive(pid, start)) return;
        clearInterval(timer);
        lost();
      }, ORPHAN_POLL_MS);
    }
    runs.clear();
  }

  return {
    launch() {
      if (proc !== null || closed) return;
      try {
        const t0 = performance.now();
        const p = fork(ENTRY, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [], serialization: 'json' });
        p.on('message', onMessage);
        p.once('exit', onExit);
        p.on('error', (err) => log.warn({ err }, 'session spawner error'));
        proc = p;
        log.debug({ pid: p.pid, fork_ms: Math.round((performance.now() - t0) * 10) / 10 }, 'session spawner started');
      } catch (err) {
        log.warn({ err }, 'the session spawner could not be started; the daemon spawns sessions itself');
      }
    },
    async start(opts) {
      const { files, command, cwd, env } = opts;
      mkdirSync(files.dir, { recursive: true, mode: 0o700 });
      const p = proc;
      if (p === null || !p.connected) return startHere(opts);
      const id = nextId++;
      return new Promise<SpawnResult>((resolve, reject) => {
        pending.set(id, { opts, resolve, reject });
        p.send({ op: 'spawn', id, file: 'sh', args: wrapperArgv(files, command), cwd, env, stdout: files.stdout, stderr: files.stderr });
        log.debug({ request: id }, 'session spawn sent to the spawner');
      });
    },
    run(file, args, runOpts) {
      const p = proc;
      if (p === null || !p.connected) return Promise.resolve(null);
      const id = nextId++;
      return new Promise<RunResult>((resolve) => {
        runs.set(id, { resolve, pid: null, start: null });
        p.send({ op: 'run', id, file, args, env: runOpts.env });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const p = proc;
      if (p === null) return;
      const gone = new Promise<void>((r) => p.once('exit', () => r()));
      p.disconnect();
      await gone;
    },
  };
}

// The fallback: the daemon spawns the session itself (its own child: the exit is an event).
async function startHere(opts: { files: SessionFiles; command: string[]; cwd: string; env: Record<string, string> }): Promise<SpawnResult> {
  const { spawnWrapped } = await import('./spawn-direct.ts'); // execa, kept out of the first chunk
  const child = spawnWrapped(opts);
  const exited = new Promise<'exited'>((r) => child.once('exit', () => r('exited')));
  if (child.pid === undefined) {
    const err = await child.catch((e: unknown) => e);
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  return { ok: true, pid: child.pid, go: child.go, exited };
}
