import { closeSync, existsSync, fstatSync, openSync, readSync, watch } from 'node:fs';
import { isLive } from '../../schemas/session.ts';
import { KEPT_OUTPUT_BYTES, type ClientFrame, type ServerFrame } from '../../schemas/terminal.ts';
import { GroveError } from '../errors.ts';
import type { Listen } from '../runtime/signal.ts';
import { waitFor } from '../runtime/wait.ts';
import type { SessionRecord, SessionsTable } from '../store/sessions.ts';
import { attachHolder } from '../terminal/client.ts';
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
      return { onFrame: (fn) => link.onFrame(fn), onEnd: (fn) => link.onClose(fn), send: (f) => link.send(f), close: () => void link.close() };
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

// What an ended terminal session printed (the kept tail, or from `offset`), then its exit.
function replay(file: string, offset: number | null, code: number | null): Attachment {
  const frames: ServerFrame[] = [];
  let fd: number | null = null;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const from = offset !== null && offset <= size && size - offset <= KEPT_OUTPUT_BYTES ? offset : Math.max(0, size - KEPT_OUTPUT_BYTES);
    const buf = Buffer.alloc(size - from);
    readSync(fd, buf, 0, buf.length, from);
    if (buf.length > 0) frames.push({ type: 'output', offset: from, data: buf.toString('utf8') });
  } catch {
    // no output file: nothing was printed
  } finally {
    if (fd !== null) closeSync(fd);
  }
  frames.push({ type: 'exit', code });
  const ends: Array<() => void> = [];
  let closed = false;
  return {
    onFrame(fn) {
      // Sent once the caller has registered for the end too.
      setImmediate(() => {
        if (closed) return;
        for (const f of frames) fn(f);
        for (const end of ends) end();
      });
    },
    onEnd: (fn) => void ends.push(fn),
    send: () => {},
    close: () => void (closed = true),
  };
}
