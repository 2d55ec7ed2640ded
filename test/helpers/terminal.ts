// A client of a terminal session's WebSocket (DESIGN §21), as a test drives it: every frame kept,
// the output since the last screen as text, waits on what arrives.
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import xtermHeadless from '@xterm/headless';
import WebSocket from 'ws';
import type { ClientFrame, ServerFrame } from '../../schemas/terminal.ts';
import type { Cleanup, TestDaemon } from './daemon.ts';

export interface TerminalClient {
  frames: ServerFrame[];
  /** the screen's data, then every output frame's, as received */
  text(): string;
  /** the offset after the last frame received */
  offset(): number;
  send(frame: ClientFrame | string): void;
  /** resolves once text() matches, or rejects after `ms` */
  waitText(pattern: RegExp | string, ms?: number): Promise<void>;
  /** the screen as a terminal shows what was received (scrollback included): its lines as text, once
   * everything received is parsed. An interface that moves the cursor instead of printing spaces
   * (Claude Code's) is read here, not in text(). */
  screen(): Promise<string>;
  /** resolves once screen() matches, or rejects after `ms` */
  waitScreen(pattern: RegExp | string, ms?: number): Promise<void>;
  waitFrame(pred: (f: ServerFrame) => boolean, ms?: number): Promise<ServerFrame>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

// The pid of the program a terminal session's holder runs (its group's leader), as the holder wrote it.
export const programPid = (d: { home: string }, id: string) => Number(readFileSync(path.join(d.home, 'data', 'sessions', id, 'pty.pid'), 'utf8'));

// Opens `/api/sessions/:id/terminal` on the daemon's TCP front (default) or its socket.
export function attach(t: Cleanup, d: TestDaemon, id: string, opts: { offset?: number | string; via?: 'tcp' | 'socket'; headers?: Record<string, string>; onOpen?: ClientFrame[] } = {}): Promise<TerminalClient> {
  const q = opts.offset !== undefined ? `?offset=${opts.offset}` : '';
  const url = opts.via === 'socket' ? `ws+unix://${d.socketPath}:/api/sessions/${id}/terminal${q}` : `ws://127.0.0.1:${d.port}/api/sessions/${id}/terminal${q}`;
  const ws = new WebSocket(url, { headers: opts.headers ?? {} });
  t.after(() => ws.terminate());
  const frames: ServerFrame[] = [];
  const events = new EventEmitter();
  // The text as its chunks, joined when read: a string grown frame by frame and searched at each one
  // is copied whole each time (a 12 MB burst cost more than the daemon's own work).
  let chunks: string[] = [];
  let joined = '';
  let joinedUpTo = 0;
  const text = () => {
    if (joinedUpTo < chunks.length) [joined, joinedUpTo] = [joined + chunks.slice(joinedUpTo).join(''), chunks.length];
    return joined;
  };
  let next = 0;
  // Screen frames so far: one replaces the text, so a wait that searches only what is new starts again.
  let screens = 0;
  // What a terminal shows of the frames: made again at each screen frame, at its size.
  let term: InstanceType<typeof xtermHeadless.Terminal> | null = null;
  // Output is parsed only when a screen is asked for: parsing every frame as it came cost more CPU than
  // the daemon under test spent on a 12 MB burst.
  let unparsed: string[] = [];
  const parsed = () =>
    new Promise<string>((resolve) => {
      if (term === null) return resolve('');
      const shown = term;
      for (const data of unparsed) shown.write(data);
      unparsed = [];
      shown.write('', () => {
        const b = shown.buffer.active;
        const lines: string[] = [];
        for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)!.translateToString(true));
        resolve(lines.join('\n'));
      });
    });
  ws.on('message', (data) => {
    const f = JSON.parse(data.toString()) as ServerFrame;
    frames.push(f);
    if (f.type === 'screen') {
      term?.dispose();
      term = new xtermHeadless.Terminal({ cols: f.cols, rows: f.rows, scrollback: 10_000, allowProposedApi: true });
      unparsed = [f.data];
    }
    if (f.type === 'output' && term !== null) unparsed.push(f.data);
    if (f.type === 'screen') [chunks, joined, joinedUpTo] = [[f.data], '', 0];
    if (f.type === 'output') chunks.push(f.data);
    if (f.type === 'screen') screens++;
    if (f.type === 'screen') next = f.offset;
    if (f.type === 'output') next = f.offset + Buffer.byteLength(f.data);
    events.emit('frame', f);
  });
  let closedWith: { code: number; reason: string } | null = null;
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      closedWith = { code, reason: reason.toString() };
      events.emit('frame');
      resolve(closedWith);
    }),
  );
  const until = <T>(check: () => T | undefined, ms: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const done = check();
      if (done !== undefined) return resolve(done);
      const timer = setTimeout(() => {
        events.off('frame', on);
        reject(new Error(`timed out waiting for ${what}; the terminal shows ${JSON.stringify(text().slice(-600))}`));
      }, ms);
      const on = () => {
        const v = check();
        if (v === undefined && closedWith !== null) {
          clearTimeout(timer);
          events.off('frame', on);
          return reject(new Error(`closed (${closedWith.code} ${closedWith.reason}) before ${what}; the terminal shows ${JSON.stringify(text().slice(-600))}`));
        }
        if (v === undefined) return;
        clearTimeout(timer);
        events.off('frame', on);
        resolve(v);
      };
      events.on('frame', on);
    });
  const client: TerminalClient = {
    frames,
    text,
    offset: () => next,
    send: (frame) => {
      if (typeof frame !== 'string' && frame.type === 'resize' && term !== null) {
        for (const data of unparsed) term.write(data);
        unparsed = [];
        term.resize(frame.cols, frame.rows);
      }
      ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    },
    waitText: (pattern, ms = 20_000) => {
      // A string is looked for in the chunks since the last look, after the end of what came before.
      let looked = 0;
      let tail = '';
      let seen = screens;
      const found = () => {
        if (typeof pattern !== 'string') return pattern.test(text());
        if (seen !== screens) [looked, tail, seen] = [0, '', screens];
        const fresh = tail + chunks.slice(looked).join('');
        looked = chunks.length;
        tail = fresh.slice(-(pattern.length - 1) || fresh.length);
        return fresh.includes(pattern);
      };
      return until(() => (found() ? true : undefined), ms, String(pattern)).then(() => {});
    },
    waitFrame: (pred, ms = 20_000) => until(() => frames.find(pred), ms, 'a frame'),
    screen: parsed,
    waitScreen: async (pattern, ms = 20_000) => {
      const matches = (shown: string) => (typeof pattern === 'string' ? shown.includes(pattern) : pattern.test(shown));
      const deadline = Date.now() + ms;
      for (;;) {
        const frameCame = new Promise<void>((resolve) => events.once('frame', () => resolve()));
        const shown = await parsed();
        if (matches(shown)) return;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${String(pattern)} on the screen; it shows:\n${shown.replace(/\n+$/, '').split('\n').slice(-40).join('\n')}`);
        if (closedWith !== null) throw new Error(`closed (${closedWith.code} ${closedWith.reason}) before ${String(pattern)} was on the screen; it shows:\n${shown.split('\n').slice(-40).join('\n')}`);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([frameCame, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
      }
    },
    closed,
    close: () => ws.close(),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      // Sent in the open event itself, before the daemon has attached to the holder.
      for (const f of opts.onOpen ?? []) ws.send(JSON.stringify(f));
      resolve(client);
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode} ${body}`), { status: res.statusCode, body: body.startsWith('{') ? JSON.parse(body) : body })));
    });
    ws.once('error', reject);
  });
}
