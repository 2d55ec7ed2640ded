// Sessions' wrappers are forked by a small process of the daemon's (spawner-process.ts), not by
// the daemon: a fork copies the forking process's memory map and holds up its thread until the
// child runs, which with a large daemon and many sessions starting delayed every API answer.
import { fork, type ChildProcess } from 'node:child_process';
import { built } from '../runtime/root.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { SessionFiles } from './wrapper.ts';

const ENTRY = built('daemon/sessions/spawner-process.js');

export interface Wrap {
  files: SessionFiles;
  command: string[];
  cwd: string;
  env: Record<string, string>;
}

export type SpawnerRequest = { op: 'spawn'; id: number; wrap: Wrap } | { op: 'go'; id: number };
export type SpawnerReply =
  | { op: 'spawned'; id: number; ok: true; pid: number }
  | { op: 'spawned'; id: number; ok: false; thrown: boolean; message: string }
  | { op: 'exited'; id: number };

// How a wrapper's life ended for the daemon: its exit was seen (it has written its status by
// then), or the spawner is gone and nothing will say (the daemon looks at the pid instead).
export type WrapperEnd = 'exited' | 'untracked';

export type SpawnResult =
  | {
      ok: true;
      pid: number;
      /** lets the held wrapper run the agent (once the session is stored) */
      go(): void;
      exited: Promise<WrapperEnd>;
    }
  | { ok: false; message: string };

export interface Spawner {
  /** the wrapper in a process group of its own, held until `go()`; a start that fails (cwd gone, no sh) is data */
  start(wrap: Wrap): Promise<SpawnResult>;
  /** ends the spawner: held wrappers run nothing, running ones go on (DESIGN §5) */
  close(): Promise<void>;
}

// The spawner's process is forked at the first session, and again after it is gone.
export function createSpawner(deps: { log: Logger }): Spawner {
  let child: ChildProcess | null = null;
  let nextId = 1;
  let closed = false;
  const replies = new Map<number, (r: Extract<SpawnerReply, { op: 'spawned' }> | null) => void>();
  const exits = new Map<number, (end: WrapperEnd) => void>();

  function spawner(): ChildProcess {
    if (child) return child;
    const c = fork(ENTRY, [], { execArgv: ['--liftoff-only'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    c.on('message', (m: SpawnerReply) => {
      if (m.op === 'exited') {
        exits.get(m.id)?.('exited');
        exits.delete(m.id);
        return;
      }
      replies.get(m.id)?.(m);
      replies.delete(m.id);
      if (replies.size === 0) c.channel?.unref();
    });
    c.once('exit', (code, signal) => {
      if (child === c) child = null;
      if (!closed) deps.log.warn({ code, signal }, "the sessions' spawner exited: the running sessions are watched by pid");
      for (const r of replies.values()) r(null);
      for (const e of exits.values()) e('untracked');
      replies.clear();
      exits.clear();
    });
    // The daemon's own handles keep it running, not this process: its channel only while a spawn
    // waits for its answer.
    c.unref();
    c.channel?.unref();
    child = c;
    return c;
  }

  return {
    async start(wrap) {
      if (closed) return { ok: false, message: 'the daemon is stopping' };
      const id = nextId++;
      const c = spawner();
      // Waited for before the request goes: a wrapper killed while held may exit before the
      // answer to its spawn is read.
      const exited = new Promise<WrapperEnd>((resolve) => exits.set(id, resolve));
      const reply = await new Promise<Extract<SpawnerReply, { op: 'spawned' }> | null>((resolve) => {
        replies.set(id, resolve);
        c.channel?.ref();
        c.send({ op: 'spawn', id, wrap } satisfies SpawnerRequest);
      });
      if (reply === null) return { ok: false, message: "the sessions' spawner exited" };
      if (!reply.ok) {
        exits.delete(id);
        if (reply.thrown) throw new Error(reply.message);
        return { ok: false, message: reply.message };
      }
      return { ok: true, pid: reply.pid, go: () => c.connected && c.send({ op: 'go', id } satisfies SpawnerRequest), exited };
    },
    close: once(async () => {
      closed = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise<void>((r) => c.once('exit', () => r()));
      // A disconnect, not a signal: what was sent before it (a last `go`) is still done.
      c.ref();
      c.disconnect();
      await gone;
    }),
  };
}
