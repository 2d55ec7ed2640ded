import { closeSync, existsSync, fstatSync, openSync, watch } from 'node:fs';
import { isLive } from '../../schemas/session.ts';
import { KEPT_OUTPUT_BYTES, type ClientFrame, type ServerFrame } from '../../schemas/terminal.ts';
import { GroveError } from '../errors.ts';
import type { Listen } from '../runtime/signal.ts';
import { waitFor } from '../runtime/wait.ts';
import type { SessionRecord, SessionsTable } from '../store/sessions.ts';
import { attachHolder } from '../terminal/client.ts';
import { readOutput } from '../terminal/output.ts';
import { findSession } from './record.ts';
import { sessionFiles } from './wrapper.ts';

// How long an attach waits for a session that has just started to have its terminal.
const HOLDER_WAIT_MS = 10_000;

// One client's view of a session's terminal (DESIGN §21): the frames it is sent, what it types.
export interface Attachment {
  onFrame(fn: (frame: ServerFrame) => void): void;
  /** no frame comes after this: the program ended, or its holder is gone */
  onEnd(fn: () => void): void;
  send(frame: ClientFrame): void;
  // No frame while paused: a client that reads slowly is sent what it can take.
  pause(): void;
  resume(): void;
  close(): void;
}

export interface AttachDeps {
  sessions: SessionsTable;
  dataDir: string;
  hostId: string;
  ended: Listen<string>;
}

// A session's terminal, checked before any upgrade: NOT_FOUND, NOT_A_TERMINAL, or REMOTE_REFUSED
// for another host's (its holder is on that machine).
export async function terminalSession(deps: AttachDeps, id: string): Promise<SessionRecord> {
  const rec = await findSession(deps.sessions, id);
  if (rec.interface !== 'terminal') {
    throw new GroveError('NOT_A_TERMINAL', `session ${id} is headless: it has no terminal to attach to (read its output at /api/sessions/${id}/output)`);
  }
  if (rec.host_id !== deps.hostId) throw new GroveError('REMOTE_REFUSED', `session ${id} runs on another host; attach to its terminal there`);
  return rec;
}

// Attaches to a running session's holder: from `offset` when that is still kept, else the screen
// first. A session that has ended (or whose holder is gone) gets the kept tail of its output from
// its file, then its exit.
export async function attachTerminal(deps: AttachDeps, rec: SessionRecord, offset: number | null): Promise<Attachment> {
  const files = sessionFiles(deps.dataDir, rec.id);
  if (isLive(rec.status)) {
    // Just started: its holder writes its program's pid once it listens and the program runs.
    await until(deps, rec.id, () => existsSync(files.ptyPid), files.dir);
    try {
      const link = await attachHolder(files.pty, offset);
      return { onFrame: (fn) => link.onFrame(fn), onEnd: (fn) => link.onClose(fn), send: (f) => link.send(f), pause: () => link.pause(), resume: () => link.resume(), close: () => void link.close() };
    } catch {
      // Its holder is gone: the session's end is being stored, with the exit it recorded.
      const end = waitFor((wake) => [deps.ended.onChange(rec.id, wake)], { ms: HOLDER_WAIT_MS });
      if (isLive((await findSession(deps.sessions, rec.id)).status)) await end.done;
      end.stop();
    }
  }
  const ended = await findSession(deps.sessions, rec.id);
  return replay(files.stdout, offset, isLive(ended.status) ? null : ended.exit_code);
}

// Until `ready()` (looked at as `dir` changes), the session's end, or HOLDER_WAIT_MS.
async function until(deps: AttachDeps, id: string, ready: () => boolean, dir: string): Promise<void> {
  if (ready()) return;
  const waiting = waitFor(
    (wake) => {
      const stops = [deps.ended.onChange(id, wake)];
      try {
        const watcher = watch(dir, () => ready() && wake());
        watcher.on('error', wake);
        stops.push(() => watcher.close());
      } catch {
        wake(); // no folder: nothing will be ready there
      }
      return stops;
    },
    { ms: HOLDER_WAIT_MS },
  );
  if (!ready()) await waiting.done;
  waiting.stop();
}

// What an ended terminal session printed (from `offset`, when that is a place in its file; else
// the kept tail), read as the client takes it, then its exit.
function replay(file: string, offset: number | null, code: number | null): Attachment {
  let fd: number | null = null;
  let at = 0;
  let size = 0;
  try {
    fd = openSync(file, 'r');
    size = fstatSync(fd).size;
    const tail = Math.max(0, size - KEPT_OUTPUT_BYTES);
    at = offset !== null && readOutput(fd, offset, size) !== null ? offset : tail;
    // The tail may begin inside a character: from the next one.
    for (let i = 0; i < 3 && at < size && readOutput(fd, at, size) === null; i++) at++;
  } catch {
    // no output file: nothing was printed
  }
  const fns: Array<(frame: ServerFrame) => void> = [];
  const ends: Array<() => void> = [];
  let paused = false;
  let done = false;
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  };
  const finish = () => {
    if (done) return;
    done = true;
    if (fd !== null) closeSync(fd);
  };
  // Sends frames while not paused, a chunk at a time; each turn yields to the event loop.
  const pump = () => {
    if (done || paused) return;
    const read = fd !== null && at < size ? readOutput(fd, at, size) : null;
    if (read === null || read.end === at) {
      for (const fn of fns) fn({ type: 'exit', code });
      finish();
      for (const end of ends) end();
      return;
    }
    for (const fn of fns) fn({ type: 'output', offset: at, data: read.data });
    at = read.end;
    schedule();
  };
  return {
    onFrame(fn) {
      fns.push(fn);
      // Begun once the caller has registered for the end too.
      if (fns.length === 1) schedule();
    },
    onEnd: (fn) => void ends.push(fn),
    send: () => {},
    pause: () => void (paused = true),
    resume() {
      if (!paused) return;
      paused = false;
      schedule();
    },
    close: finish,
  };
}
