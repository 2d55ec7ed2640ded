// Terminal sessions (DESIGN §21): a real daemon's terminal session through the TCP front's
// WebSocket, each measure beside the same thing done bare in the bench's own process.
// - echo: one key sent (an `input` frame) to its echo back (the `output` frame that shows it),
//   one key at a time, from the stand-in TUI (test/fixtures/tui.mjs); baseline: the same program
//   under a bare @lydell/node-pty in the bench's process, the key written to it and its echo read.
//   Target: p99 ≤ baseline + 20 ms.
// - flood: bench/term-program.mjs printing 5 MB/s for 10 s in a terminal session with 3 clients
//   attached through the front from offset 0: every client must get every byte (their count, their
//   offsets without a gap, and a CRC-32 of all of them against what the program prints); MB/s per
//   client, and the CPU seconds of the daemon, its store's process and the session's holder
//   (/proc/<pid>/stat); baseline: the same program under a bare node-pty read by one reader (the
//   same checks) in the bench's process, its CPU seconds.
// - screen: a 200×60 terminal (resized so by a client first) after 10,060 lines printed (10,000 in
//   the scrollback): from a WebSocket's open to its `screen` frame, attach after attach; target
//   ≤ 100 ms; baseline: @xterm/headless and its serialize addon in the bench's process, fed the
//   same bytes, serializing them.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import * as nodePty from '@lydell/node-pty';
import serializeAddon from '@xterm/addon-serialize';
import xtermHeadless, { type ITerminalAddon } from '@xterm/headless';
import WebSocket from 'ws';
import { SCROLLBACK_LINES } from '../daemon/terminal/screen.ts';
import type { ClientFrame, ServerFrame } from '../schemas/terminal.ts';
import { FLOOD_LINE_BYTES, floodLine } from './term-lines.mjs';
import { call, FIXTURE_AGENT, readyTask, ROOT, startBenchDaemon, type BenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { judge, printTable, type Row } from './table.ts';

const TUI = path.join(ROOT, 'test', 'fixtures', 'tui.mjs');
const PROGRAM = path.join(ROOT, 'bench', 'term-program.mjs');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

// A process's CPU seconds so far (user + system, all its threads).
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}
const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};
// The daemon's store: its child running the store's driver (PGlite in a process of its own).
function storePid(daemon: number): number | null {
  const children = readFileSync(`/proc/${daemon}/task/${daemon}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  return children.find((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes(path.join('store', 'driver', 'worker.js'));
    } catch {
      return false;
    }
  }) ?? null;
}

// What the flood prints, as the terminal gives it (the pty turns each \n into \r\n): its bytes
// and their CRC-32.
function floodExpected(rate: number, seconds: number): { bytes: number; crc: number } {
  const tty = (s: string) => s.replaceAll('\n', '\r\n');
  let crc = crc32(tty('ready\n'));
  let bytes = 7;
  const lines = Math.floor((rate * seconds) / FLOOD_LINE_BYTES);
  for (let i = 0; i < lines; i++) crc = crc32(tty(floodLine(i)), crc);
  bytes += lines * (FLOOD_LINE_BYTES + 1);
  crc = crc32('done\r\n', crc);
  return { bytes: bytes + 6, crc };
}

// A reader's check of a stream: its bytes counted, its CRC-32, an offset without a gap.
class Check {
  bytes = 0;
  crc = 0;
  gaps = 0;
  add(data: string, offset?: number): void {
    if (offset !== undefined && offset !== this.bytes) this.gaps++;
    this.bytes += Buffer.byteLength(data);
    this.crc = crc32(data, this.crc);
  }
}

// A client of a session's WebSocket through the TCP front, lean enough for 50 MB: each frame to
// `on`, the frames' data checked and its tail kept for waits.
interface Client {
  ws: WebSocket;
  check: Check;
  tail: string;
  opened: number;
  /** when the first screen frame came, and it */
  screenAt: number;
  screen: { cols: number; rows: number; data: string } | null;
  send(f: ClientFrame): void;
  until(pred: (f: ServerFrame | null) => boolean, ms?: number): Promise<number>;
  close(): Promise<void>;
}

function attach(d: BenchDaemon, id: string, offset?: number): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${d.port}/api/sessions/${id}/terminal${offset === undefined ? '' : `?offset=${offset}`}`, { perMessageDeflate: false });
  const waits = new Set<{ pred: (f: ServerFrame | null) => boolean; resolve: (t: number) => void }>();
  let closed = false;
  const c: Client = {
    ws,
    check: new Check(),
    tail: '',
    opened: 0,
    screenAt: 0,
    screen: null,
    send: (f) => ws.send(JSON.stringify(f)),
    until: (pred, ms = 60_000) =>
      new Promise((resolve, reject) => {
        if (pred(null)) return resolve(performance.now());
        const timer = setTimeout(() => {
          waits.delete(w);
          reject(new Error(`timed out; the terminal's last output: ${JSON.stringify(c.tail.slice(-300))}`));
        }, ms);
        const w = {
          pred,
          resolve: (t: number) => {
            clearTimeout(timer);
            waits.delete(w);
            resolve(t);
          },
        };
        waits.add(w);
      }),
    close: () =>
      new Promise((resolve) => {
        if (closed) return resolve();
        ws.once('close', () => resolve());
        ws.close();
      }),
  };
  ws.on('message', (data) => {
    const t = performance.now();
    const f = JSON.parse(data.toString()) as ServerFrame;
    if (f.type === 'screen' && c.screen === null) {
      c.screenAt = t;
      c.screen = f;
    }
    if (f.type === 'output') {
      c.check.add(f.data, f.offset);
      c.tail = (c.tail + f.data).slice(-4096);
    }
    for (const w of [...waits]) if (w.pred(f)) w.resolve(t);
  });
  ws.on('close', () => {
    closed = true;
    for (const w of [...waits]) if (w.pred(null)) w.resolve(performance.now());
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      c.opened = performance.now();
      resolve(c);
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

// A reader of the flood: a client through the front that, when it is cut for reading too slowly
// (the daemon's and the holder's limits, DESIGN §21), comes back with ?offset= as the dashboard
// and `grove attach` do. Bytes are lost only when that offset is no longer kept (a screen comes).
class FloodReader {
  check = new Check();
  tail = '';
  /** the close code and reason of each cut */
  cuts: string[] = [];
  /** comebacks answered with a screen: what came between was lost */
  screens = 0;
  /** the bytes those screens skipped */
  lost = 0;
  ws: WebSocket | null = null;
  #exited = false;
  #finish: (t: number) => void = () => {};
  #exit: () => void = () => {};
  readonly done = new Promise<number>((resolve) => (this.#finish = resolve));
  readonly exited = new Promise<void>((resolve) => (this.#exit = resolve));

  constructor(
    private readonly d: BenchDaemon,
    private readonly id: string,
    private readonly total: number,
  ) {}

  open(offset: number): Promise<void> {
    const ws = new WebSocket(`ws://127.0.0.1:${this.d.port}/api/sessions/${this.id}/terminal?offset=${offset}`, { perMessageDeflate: false });
    this.ws = ws;
    ws.on('message', (data) => {
      const t = performance.now();
      const f = JSON.parse(data.toString()) as ServerFrame;
      if (f.type === 'exit') {
        this.#exited = true;
        return this.#exit();
      }
      if (f.type === 'screen') {
        this.screens++;
        this.lost += f.offset - this.check.bytes;
        this.check.bytes = f.offset;
        this.tail = f.data.slice(-64);
      } else {
        this.check.add(f.data, f.offset);
        this.tail = (this.tail + f.data).slice(-64);
      }
      if (this.check.bytes >= this.total || this.tail.endsWith('done\r\n')) this.#finish(t);
    });
    ws.on('close', (code, reason) => {
      if (this.#exited || ws !== this.ws) return;
      this.cuts.push(`${code} ${reason.toString()}`);
      void this.open(this.check.bytes).catch(() => this.#exit());
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
  }

  send(f: ClientFrame): void {
    this.ws?.send(JSON.stringify(f));
  }

  close(): void {
    this.#exited = true;
    this.ws?.terminate();
  }
}

// A program under a bare node-pty in the bench's process, as the holder runs it.
function barePty(args: string[], onData: (s: string) => void) {
  const term = nodePty.spawn(process.execPath, args, { name: 'xterm-256color', cols: 120, rows: 40, cwd: ROOT, env: { ...process.env, TERM: 'xterm-256color' } });
  let tail = '';
  const waits = new Set<() => void>();
  term.onData((s) => {
    onData(s);
    tail = (tail + s).slice(-4096);
    for (const w of [...waits]) w();
  });
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()));
  return {
    term,
    exited,
    tail: () => tail,
    // Resolves once `pred` holds, with the time it was seen.
    until: (pred: () => boolean, ms = 60_000) =>
      new Promise<number>((resolve, reject) => {
        if (pred()) return resolve(performance.now());
        const timer = setTimeout(() => reject(new Error(`timed out; the bare pty's last output: ${JSON.stringify(tail.slice(-300))}`)), ms);
        const w = () => {
          if (!pred()) return;
          clearTimeout(timer);
          waits.delete(w);
          resolve(performance.now());
        };
        waits.add(w);
      }),
  };
}

async function sessionEnded(d: BenchDaemon, id: string, ms = 120_000): Promise<any> {
  const t0 = performance.now();
  for (;;) {
    const s = await call(d.api, 'GET', `/api/sessions/${id}`);
    if (!['queued', 'starting', 'running'].includes(s.status)) return s;
    if (performance.now() - t0 > ms) throw new Error(`session ${id} still ${s.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const startTerminal = async (d: BenchDaemon, taskId: string, agent: string, prompt: string) =>
  (await call(d.api, 'POST', `/api/tasks/${taskId}/sessions`, { agent, prompt, interface: 'terminal' })) as { id: string; sandbox: { confined: boolean } };

export interface TerminalOptions {
  template: string;
  keys: number;
  rate: number;
  seconds: number;
  clients: number;
  cols: number;
  rows: number;
  scrollback: number;
  attaches: number;
  /** a built checkout whose daemon (and so holder) runs; default this one */
  checkout?: string;
}

export async function benchTerminal(opts: TerminalOptions) {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-term-'));
  cpSync(opts.template, path.join(home, 'data', 'pgdata'), { recursive: true });
  writeFileSync(
    path.join(home, 'config.json'),
    JSON.stringify({
      agents: {
        tui: { command: [FIXTURE_AGENT, '{prompt}'], terminal: [process.execPath, TUI, '{prompt}'] },
        program: { command: [FIXTURE_AGENT, '{prompt}'], terminal: [process.execPath, PROGRAM, '{prompt}'] },
      },
    }),
  );
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-term-repo-'));
  const d = await startBenchDaemon({ template: null, home, port: true, ...(opts.checkout ? { checkout: opts.checkout } : {}) }).catch((err) => {
    rmSync(home, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    throw err;
  });
  const live: string[] = [];
  const bare: Array<ReturnType<typeof barePty>> = [];
  const clients: Client[] = [];
  const floodReaders: FloodReader[] = [];
  try {
    const { task } = await readyTask(d.api, root, 'terminal');
    const sessionDir = (id: string) => path.join(home, 'data', 'sessions', id);

    // (1) A key to its echo, one at a time, alternating with the bare pty.
    const tui = await startTerminal(d, task.id, 'tui', 'bench');
    live.push(tui.id);
    const c = await attach(d, tui.id);
    clients.push(c);
    await c.until(() => c.tail.includes('ready'));
    let bareSeen = '';
    const b = barePty([TUI, 'bench'], (s) => (bareSeen = (bareSeen + s).slice(-256)));
    bare.push(b);
    await b.until(() => bareSeen.includes('ready'));
    const KEYS = 'abcdefghijklmnoprstuvwxyz'; // no q: it quits
    const echo = { grove: [] as number[], bare: [] as number[] };
    const warm = 10;
    for (let i = 0; i < opts.keys + warm; i++) {
      const key = KEYS[i % KEYS.length]!;
      const want = `key "${key}"`;
      c.tail = '';
      let t0 = performance.now();
      c.send({ type: 'input', data: key });
      let t1 = await c.until(() => c.tail.includes(want), 10_000);
      if (i >= warm) echo.grove.push(t1 - t0);
      bareSeen = '';
      t0 = performance.now();
      b.term.write(key);
      t1 = await b.until(() => bareSeen.includes(want), 10_000);
      if (i >= warm) echo.bare.push(t1 - t0);
    }
    c.send({ type: 'input', data: 'q' });
    b.term.write('q');
    await Promise.all([c.until((f) => f === null || f.type === 'exit'), b.exited]);
    await c.close();
    await sessionEnded(d, tui.id);

    // (2) The flood: 3 clients through the front from offset 0, then the bare pty's one reader.
    const want = floodExpected(opts.rate, opts.seconds);
    const prompt = `flood:${opts.rate}:${opts.seconds}`;
    const flood = await startTerminal(d, task.id, 'program', prompt);
    live.push(flood.id);
    const readers = Array.from({ length: opts.clients }, () => new FloodReader(d, flood.id, want.bytes));
    floodReaders.push(...readers);
    await Promise.all(readers.map((r) => r.open(0)));
    const ready = Date.now();
    while (!readers.every((r) => r.tail.includes('ready'))) {
      if (Date.now() - ready > 30_000) throw new Error('the flood program did not say ready');
      await new Promise((r) => setTimeout(r, 20));
    }
    const holder = parentOf(Number(readFileSync(path.join(sessionDir(flood.id), 'pty.pid'), 'utf8')));
    const holderCmd = readFileSync(`/proc/${holder}/cmdline`, 'utf8');
    if (!holderCmd.includes('pty-hold')) throw new Error(`the program's parent ${holder} is not its holder: ${holderCmd}`);
    const store = storePid(d.pid);
    const cpu0 = { daemon: cpuSeconds(d.pid), holder: cpuSeconds(holder), store: store === null ? NaN : cpuSeconds(store) };
    const clientsCpu0 = process.cpuUsage();
    const go = performance.now();
    readers[0]!.send({ type: 'input', data: 'g' });
    // Until every byte, or the program's last line (then some were lost).
    const limit = opts.seconds * 1000 + 300_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the flood did not reach its clients in ${limit} ms: ${readers.map((r) => `${r.check.bytes} bytes, cuts ${r.cuts.join(', ')}`).join('; ')}`)), limit);
    });
    const done = await Promise.race([Promise.all(readers.map((r) => r.done)), late]).finally(() => clearTimeout(timer));
    const cpu1 = { daemon: cpuSeconds(d.pid), holder: cpuSeconds(holder), store: store === null ? NaN : cpuSeconds(store) };
    const clientsCpu = process.cpuUsage(clientsCpu0);
    readers[0]!.send({ type: 'input', data: 'q' });
    await Promise.all(readers.map((r) => r.exited));
    const floodEnd = await sessionEnded(d, flood.id, 300_000);
    const stored = performance.now();
    const cpu2 = { daemon: cpuSeconds(d.pid), store: store === null ? NaN : cpuSeconds(store) };
    for (const r of readers) r.close();
    const perClient = readers.map((r, i) => ({
      bytes: r.check.bytes,
      gaps: r.check.gaps,
      crc_ok: r.check.crc === want.crc && r.check.bytes === want.bytes,
      cuts: r.cuts,
      lost_to_a_screen: r.screens,
      bytes_lost: r.lost,
      mb_s: round(r.check.bytes / 1e6 / ((done[i]! - go) / 1000)),
      last_byte_s: round((done[i]! - go) / 1000),
    }));

    const bareCheck = new Check();
    const bf = barePty([PROGRAM, prompt], (s) => bareCheck.add(s));
    bare.push(bf);
    await bf.until(() => bf.tail().includes('ready'));
    const bcpu0 = process.cpuUsage();
    const bgo = performance.now();
    bf.term.write('g');
    const bdone = await bf.until(() => bareCheck.bytes >= want.bytes || bf.tail().endsWith('done\r\n'), opts.seconds * 1000 + 120_000);
    const bcpu1 = process.cpuUsage(bcpu0);
    bf.term.write('q');
    await bf.exited;
    const bareFlood = {
      bytes: bareCheck.bytes,
      crc_ok: bareCheck.crc === want.crc && bareCheck.bytes === want.bytes,
      mb_s: round(bareCheck.bytes / 1e6 / ((bdone - bgo) / 1000)),
      last_byte_s: round((bdone - bgo) / 1000),
      cpu_s: round((bcpu1.user + bcpu1.system) / 1e6),
    };

    // (3) The screen on attach: 200×60, its scrollback full, attach after attach.
    const scroll = await startTerminal(d, task.id, 'program', `scroll:${opts.scrollback + opts.rows}`);
    live.push(scroll.id);
    const filler = await attach(d, scroll.id, 0);
    clients.push(filler);
    const fed: string[] = [];
    filler.ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as ServerFrame;
      if (f.type === 'output') fed.push(f.data);
    });
    await filler.until(() => filler.tail.includes('ready'));
    const readyBytes = fed.join('');
    filler.send({ type: 'resize', cols: opts.cols, rows: opts.rows });
    filler.send({ type: 'input', data: 'g' });
    await filler.until(() => filler.tail.endsWith('done\r\n'), 120_000);
    // The baseline: the same bytes into a headless terminal of the same size and scrollback as the
    // holder's, the same way.
    const term = new xtermHeadless.Terminal({ cols: 120, rows: 40, scrollback: SCROLLBACK_LINES, allowProposedApi: true });
    const serializer = new serializeAddon.SerializeAddon();
    term.loadAddon(serializer as unknown as ITerminalAddon);
    await new Promise<void>((r) => term.write(readyBytes, r));
    term.resize(opts.cols, opts.rows);
    await new Promise<void>((r) => term.write(fed.join('').slice(readyBytes.length), r));
    await filler.close();
    const screen = { grove: [] as number[], bare: [] as number[], grove_bytes: 0, bare_bytes: 0, cols: 0, rows: 0 };
    for (let i = 0; i < opts.attaches + 2; i++) {
      const a = await attach(d, scroll.id);
      await a.until(() => a.screen !== null, 30_000);
      const s0 = performance.now();
      const data = serializer.serialize();
      const s1 = performance.now();
      await a.close();
      if (i < 2) continue; // warm-up
      screen.grove.push(a.screenAt - a.opened);
      screen.bare.push(s1 - s0);
      screen.bare_bytes = Buffer.byteLength(data);
      screen.grove_bytes = Buffer.byteLength(a.screen!.data);
      screen.cols = a.screen!.cols;
      screen.rows = a.screen!.rows;
    }
    term.dispose();
    await startTerminalEnd(d, scroll.id);

    const e = { grove: summarize(echo.grove), bare: summarize(echo.bare) };
    const sc = { grove: summarize(screen.grove), bare: summarize(screen.bare) };
    const ticks = (x: number) => round(x, 2);
    return {
      echo_ms: {
        keys: opts.keys,
        grove: { p50: round(e.grove.median), p99: round(e.grove.p99) },
        bare_pty: { p50: round(e.bare.median), p99: round(e.bare.p99) },
        p99_beyond_bare: round(e.grove.p99 - e.bare.p99),
      },
      flood: {
        rate_mb_s: opts.rate / 1e6,
        seconds: opts.seconds,
        expected_bytes: want.bytes,
        clients: perClient,
        all_bytes: perClient.every((p) => p.crc_ok && p.gaps === 0 && p.lost_to_a_screen === 0),
        min_client_mb_s: Math.min(...perClient.map((p) => p.mb_s)),
        // From the `g` to the last byte at every client; the daemon's again once the session's
        // end is recorded (every line stored).
        cpu_s: {
          daemon: ticks(cpu1.daemon - cpu0.daemon),
          holder: ticks(cpu1.holder - cpu0.holder),
          store: ticks(cpu1.store - cpu0.store),
          daemon_until_stored: ticks(cpu2.daemon - cpu0.daemon),
          store_until_stored: ticks(cpu2.store - cpu0.store),
          // the bench's own process, its clients reading and checking
          bench_clients: ticks((clientsCpu.user + clientsCpu.system) / 1e6),
        },
        stored_s: round((stored - go) / 1000),
        session_status: floodEnd.status,
        // the program in the sandbox (bwrap), as a user's agent runs where the machine can
        confined: flood.sandbox.confined,
        bare_pty: bareFlood,
      },
      screen_ms: {
        cols: screen.cols,
        rows: screen.rows,
        printed_lines: opts.scrollback + opts.rows,
        scrollback_lines: SCROLLBACK_LINES,
        attaches: opts.attaches,
        grove: { p50: round(sc.grove.median), p99: round(sc.grove.p99) },
        bare_serialize: { p50: round(sc.bare.median), p99: round(sc.bare.p99) },
        grove_frame_bytes: screen.grove_bytes,
        bare_bytes: screen.bare_bytes,
      },
    };
  } finally {
    for (const c of clients) c.ws.terminate();
    for (const r of floodReaders) r.close();
    for (const b of bare) {
      try {
        b.term.kill();
      } catch {
        // ended
      }
    }
    for (const id of live) await call(d.api, 'DELETE', `/api/sessions/${id}`).catch(() => {});
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

// A program of the bench that waits for `q`: told so through a client, then its end awaited.
async function startTerminalEnd(d: BenchDaemon, id: string): Promise<void> {
  const c = await attach(d, id);
  c.send({ type: 'input', data: 'q' });
  await c.until((f) => f === null || f.type === 'exit');
  await c.close();
  await sessionEnded(d, id);
}

export function terminalOptions(template: string, quick: boolean): TerminalOptions {
  return { template, keys: quick ? 100 : 300, rate: 5_000_000, seconds: quick ? 4 : 10, clients: 3, cols: 200, rows: 60, scrollback: 10_000, attaches: quick ? 10 : 30 };
}

export function terminalRows(t: Awaited<ReturnType<typeof benchTerminal>>): Row[] {
  const f = t.flood;
  const cpu = f.cpu_s;
  return [
    {
      what: `terminal: a key to its echo through the TCP front's WebSocket vs the same program under a bare node-pty (ms, p99 of ${t.echo_ms.keys}, one at a time)`,
      grove: t.echo_ms.grove.p99,
      base: t.echo_ms.bare_pty.p99,
      ratio: round(t.echo_ms.grove.p99 / t.echo_ms.bare_pty.p99),
      target: { op: '≤', limit: 20, of: 'ms beyond' },
    },
    { what: 'terminal: the same key to its echo (ms, p50)', grove: t.echo_ms.grove.p50, base: t.echo_ms.bare_pty.p50, ratio: round(t.echo_ms.grove.p50 / t.echo_ms.bare_pty.p50) },
    {
      what: `terminal: ${f.rate_mb_s} MB/s for ${f.seconds} s, ${f.clients.length} clients through the front vs one reader of a bare node-pty (MB/s, the slowest client; every byte at every client: ${f.all_bytes}; clients cut for reading slowly and back with ?offset=: ${f.clients.reduce((n, c) => n + c.cuts.length, 0)})`,
      grove: f.min_client_mb_s,
      base: f.bare_pty.mb_s,
      ratio: round(f.min_client_mb_s / f.bare_pty.mb_s),
      target: { op: '≥', limit: 0.95, of: 'ratio', ok: f.all_bytes && f.bare_pty.crc_ok },
    },
    { what: `terminal: the same, the daemon's CPU until the last byte at every client vs the bare reader's (s; its store ${cpu.store} s; until every line stored: daemon ${cpu.daemon_until_stored} s, store ${cpu.store_until_stored} s)`, grove: cpu.daemon, base: f.bare_pty.cpu_s, ratio: round(cpu.daemon / f.bare_pty.cpu_s) },
    { what: `terminal: the same, the session's holder's CPU vs the bare reader's (s)`, grove: cpu.holder, base: f.bare_pty.cpu_s, ratio: round(cpu.holder / f.bare_pty.cpu_s) },
    {
      what: `terminal: the screen frame on attach, ${t.screen_ms.cols}×${t.screen_ms.rows} after ${t.screen_ms.printed_lines} lines printed, ${t.screen_ms.scrollback_lines} kept in the scrollback (${round(t.screen_ms.grove_frame_bytes / 1e6)} MB), from the WebSocket's open vs @xterm/headless serializing the same (ms, p99 of ${t.screen_ms.attaches})`,
      grove: t.screen_ms.grove.p99,
      base: t.screen_ms.bare_serialize.p99,
      ratio: round(t.screen_ms.grove.p99 / t.screen_ms.bare_serialize.p99),
      target: { op: '≤', limit: 100, of: 'ms' },
    },
    { what: 'terminal: the same screen frame (ms, p50)', grove: t.screen_ms.grove.p50, base: t.screen_ms.bare_serialize.p50, ratio: round(t.screen_ms.grove.p50 / t.screen_ms.bare_serialize.p50) },
  ];
}

// `npm run build && node --import tsx bench/terminal.ts [--quick]`: this part alone, as in the full run.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'terminal.ts')) {
  const { makeMigratedStore } = await import('./daemon.ts');
  const tpl = mkdtempSync(path.join(tmpdir(), 'grove-bench-tpl-'));
  try {
    await makeMigratedStore(path.join(tpl, 'pgdata'));
    const result = await benchTerminal(terminalOptions(path.join(tpl, 'pgdata'), process.argv.includes('--quick')));
    console.log(JSON.stringify(result, null, 2));
    printTable(judge(terminalRows(result)));
  } finally {
    rmSync(tpl, { recursive: true, force: true });
  }
}
