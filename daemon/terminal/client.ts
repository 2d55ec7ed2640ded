import { createConnection } from 'node:net';
import type { AttachLine, ClientFrame, ServerFrame } from '../../schemas/terminal.ts';
import { LineBuffer, line } from './lines.ts';

// An attachment to a terminal session's holder: its frames as they come, the client's frames to it.
export interface HolderLink {
  onFrame(fn: (frame: ServerFrame) => void): void;
  // Once, when the link is closed (by either side, or broken: then with the error).
  onClose(fn: (err?: Error) => void): void;
  send(frame: ClientFrame): void;
  // Stops reading the holder's frames, and reads on: a reader behind holds the holder's writes to
  // it (it then follows from its file, missing nothing).
  pause(): void;
  resume(): void;
  close(): void;
}

// Attaches to the holder on `socket`, from `offset` (null: the screen as it is). Rejects with the
// connection's error (its `code`: ENOENT, ECONNREFUSED…) when the holder cannot be reached.
export function attachHolder(socket: string, offset: number | null): Promise<HolderLink> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socket);
    const frameFns: ((frame: ServerFrame) => void)[] = [];
    const closeFns: ((err?: Error) => void)[] = [];
    const lines = new LineBuffer();
    let closed: { err?: Error } | null = null;
    let failure: Error | undefined;
    conn.setEncoding('utf8');
    conn.once('error', (err) => {
      failure = err;
      reject(err);
    });
    conn.on('error', () => {}); // a later one: the close that follows says it
    conn.once('connect', () => {
      conn.write(line({ type: 'attach', offset } satisfies AttachLine));
      resolve(link);
    });
    conn.on('data', (chunk: string) => {
      const got = lines.push(chunk) ?? [];
      for (const text of got) {
        if (closed !== null) return;
        let frame: ServerFrame;
        try {
          frame = JSON.parse(text) as ServerFrame;
        } catch {
          failure = new Error('the holder sent a line that is not JSON');
          conn.destroy();
          return;
        }
        for (const fn of frameFns) fn(frame);
      }
    });
    conn.once('close', () => {
      closed = failure === undefined ? {} : { err: failure };
      for (const fn of closeFns) fn(closed.err);
    });
    const link: HolderLink = {
      onFrame: (fn) => void frameFns.push(fn),
      onClose(fn) {
        if (closed === null) closeFns.push(fn);
        else queueMicrotask(() => fn(closed!.err));
      },
      send(frame) {
        if (!conn.destroyed && !conn.writableEnded) conn.write(line(frame));
      },
      pause: () => void conn.pause(),
      resume: () => void conn.resume(),
      close() {
        if (!conn.destroyed && !conn.writableEnded) conn.end();
      },
    };
  });
}
