import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import test from 'node:test';
import { LineBuffer } from '../../daemon/terminal/lines.ts';
import { SCROLLBACK_LINES } from '../../daemon/terminal/screen.ts';
import type { ServerFrame } from '../../schemas/terminal.ts';
import { GROVE, grove } from '../helpers/cli.ts';
import { makeTempDir } from '../helpers/git.ts';
import { attach, contiguous, startHolder, TUI } from '../helpers/holder.ts';
import { gone, marker, processesMatching, waitPidGone } from '../helpers/state.ts';
import { within } from '../helpers/within.ts';

const tui = (title = 'GROVE TUI') => [process.execPath, TUI, title];
// The test's sleeps running (the command lines of sh and the holder hold the marker too).
const sleeps = (m: string) => processesMatching(m).filter((args) => args.startsWith('sleep ')).length;
const exitOf = (s: { frames: { type: string }[] }) => s.frames.find((f) => f.type === 'exit') as { code: number | null } | undefined;

test('the holder: the screen first (drawn title, a real tty), keys come back, a resize reaches the program, q ends it with 3', async (t) => {
  const h = await startHolder(t, tui('HELLO HOLDER'), { cols: 90, rows: 30 });
  const a = await attach(t, h.socket, null);
  await a.sees('ready');
  const first = a.frames[0]!;
  assert.equal(first.type, 'screen');
  assert.ok(first.type === 'screen' && first.cols === 90 && first.rows === 30);
  assert.match(a.text(), /HELLO HOLDER/);
  assert.match(a.text(), /tty yes pid (\d+)/);
  assert.equal(Number(/tty yes pid (\d+)/.exec(a.text())![1]), h.programPid(), 'pty.pid names the program');
  assert.match(a.text(), /size 90x30/);
  assert.ok(statSync(h.socket).isSocket());
  assert.equal(statSync(h.socket).mode & 0o777, 0o600);

  a.link.send({ type: 'input', data: 'xy' });
  await a.sees('key "y"');
  a.link.send({ type: 'resize', cols: 120, rows: 40 });
  await a.sees('size 120x40');
  const b = await attach(t, h.socket, null);
  await b.until('a screen', () => b.frames.length > 0);
  assert.ok(b.frames[0]!.type === 'screen' && b.frames[0]!.cols === 120 && b.frames[0]!.rows === 40, 'the screen has the new size');

  a.link.send({ type: 'input', data: 'q' });
  await a.until('the exit frame', () => exitOf(a) !== undefined);
  assert.equal(exitOf(a)!.code, 3);
  await a.until('the holder closing', () => a.closed);
  assert.equal(await within(10_000, 'the holder exiting', h.exited), 3);
  assert.equal(a.frames.at(-1)!.type, 'exit', 'the exit frame comes last');
  const file = readFileSync(h.stdout);
  const s = a.frames[0]!.type === 'screen' ? a.frames[0]!.offset : -1;
  assert.ok(contiguous(a, s));
  assert.equal(a.output(), file.subarray(s).toString(), 'the client got every byte after its screen');
  assert.match(file.toString(), /HELLO HOLDER[\s\S]*key "x"[\s\S]*size 120x40[\s\S]*bye/);
  assert.equal(existsSync(h.socket), false, 'the socket file is removed');
  assert.equal(existsSync(h.pidFile), true, 'pty.pid stays for the daemon');
});

test('two clients see the same bytes; a reconnect with an offset gets exactly what it missed', async (t) => {
  const h = await startHolder(t, tui());
  const a = await attach(t, h.socket, 0);
  const b = await attach(t, h.socket, null);
  await a.sees('ready');
  await b.sees('ready');
  assert.equal(a.frames[0]!.type, 'output', 'offset 0 is kept: no screen');

  // c follows a while, goes away, and comes back where it left off.
  const c = await attach(t, h.socket, null);
  b.link.send({ type: 'input', data: 'a' });
  await c.sees('key "a"');
  c.link.close();
  await c.until('closing', () => c.closed);
  const left = c.frames.reduce((at, f) => (f.type === 'screen' ? f.offset : f.type === 'output' ? f.offset + Buffer.byteLength(f.data) : at), 0);
  a.link.send({ type: 'input', data: 'bc' });
  await b.sees('key "c"');
  const back = await attach(t, h.socket, left);
  b.link.send({ type: 'input', data: 'q' });
  for (const s of [a, b, back]) await s.until('the exit frame', () => exitOf(s) !== undefined);
  assert.equal(await h.exited, 3);

  const file = readFileSync(h.stdout);
  assert.ok(contiguous(a, 0));
  assert.equal(a.output(), file.toString(), 'a client from 0 has the whole output');
  const bs = b.frames[0]!.type === 'screen' ? b.frames[0]!.offset : -1;
  assert.ok(contiguous(b, bs));
  assert.equal(Buffer.from(b.output()).toString('hex'), file.subarray(bs).toString('hex'), 'b got the same bytes from its screen on');
  assert.equal(back.frames[0]!.type, 'output', 'what it missed is kept: no screen');
  assert.ok(contiguous(back, left));
  assert.equal(back.output(), file.subarray(left).toString(), 'the reconnect got exactly the missed bytes, then the rest');
  assert.match(back.output(), /key "b"/);
});

test('any offset of the output gets exactly the bytes after it; one past the end or inside a character gets the screen, then the output after it', async (t) => {
  const m = marker(t);
  const big = 3 * 1024 * 1024;
  const h = await startHolder(t, ['sh', '-c', `printf 'caf\\303\\251\\n'; head -c ${big} /dev/zero | tr '\\0' x; echo; echo done; exec sleep ${m}`]);
  const a = await attach(t, h.socket, 0);
  await a.sees('done');
  assert.equal(a.frames[0]!.type, 'output');
  const file = readFileSync(h.stdout);
  const total = file.length;
  assert.ok(total > big);
  // 'café\r\n': the é is bytes 3 and 4.
  for (const offset of [0, 3, 10, total - big + 5]) {
    const back = await attach(t, h.socket, offset);
    await back.sees('done');
    assert.equal(back.frames[0]!.type, 'output', `offset ${offset}: no screen`);
    assert.ok(contiguous(back, offset));
    assert.ok(back.output() === file.subarray(offset).toString(), `offset ${offset}: exactly the bytes after it`);
  }
  for (const offset of [4, total + 5]) {
    const late = await attach(t, h.socket, offset);
    await late.until('a screen', () => late.frames.length > 0);
    const screen = late.frames[0]!;
    assert.equal(screen.type, 'screen', `offset ${offset}`);
    assert.ok(screen.type === 'screen' && screen.offset === total && screen.data.includes('done'));
    assert.ok(screen.type === 'screen' && (screen.data.match(/x/g) ?? []).length >= SCROLLBACK_LINES * 80, 'with its scrollback, full');
  }
  const now = await attach(t, h.socket, total);
  a.link.send({ type: 'input', data: 'hi\n' });
  await now.sees('hi');
  assert.equal(now.frames[0]!.type, 'output', 'the offset of now is kept');
  assert.equal(now.frames[0]!.type === 'output' && now.frames[0]!.offset, total);
});

test('Ctrl-C typed interrupts sleep in sh -c under the holder: exit 130', async (t) => {
  const m = marker(t);
  const h = await startHolder(t, ['sh', '-c', `echo ready; sleep ${m}; echo after`]);
  const a = await attach(t, h.socket, 0);
  await a.sees('ready');
  assert.equal(sleeps(m), 1);
  a.link.send({ type: 'input', data: '\x03' });
  await a.until('the exit frame', () => exitOf(a) !== undefined);
  assert.equal(exitOf(a)!.code, 130);
  assert.equal(await h.exited, 130);
  await gone(m);
  assert.doesNotMatch(readFileSync(h.stdout, 'utf8'), /after/);
});

test('SIGTERM to the holder ends the program through its group, the holder answers its status, nothing is left', async (t) => {
  const m = marker(t);
  const h = await startHolder(t, ['sh', '-c', `echo ready; sleep ${m} & sleep ${m}`]);
  const a = await attach(t, h.socket, null);
  await a.sees('ready');
  assert.equal(sleeps(m), 2);
  const pid = h.programPid();
  process.kill(h.proc.pid!, 'SIGTERM');
  assert.equal(await within(10_000, 'the holder exiting', h.exited), 143);
  assert.equal(exitOf(a)?.code, 143);
  await gone(m);
  await waitPidGone(pid);
  assert.equal(existsSync(h.socket), false);
});

test('SIGINT and SIGQUIT to the holder are ignored (sh gives them ignored; grove never sends them)', async (t) => {
  const h = await startHolder(t, tui());
  const a = await attach(t, h.socket, null);
  await a.sees('ready');
  process.kill(h.proc.pid!, 'SIGINT');
  process.kill(h.proc.pid!, 'SIGQUIT');
  a.link.send({ type: 'input', data: 'k' });
  await a.sees('key "k"');
  assert.equal(h.proc.exitCode, null);
  assert.equal(h.proc.signalCode, null);
});

test("a program that ignores the terminal's hangup outlives a killed holder; its group from pty.pid ends it", async (t) => {
  const m = marker(t);
  const h = await startHolder(t, ['sh', '-c', `trap '' HUP; echo ready; sleep ${m}`]);
  const a = await attach(t, h.socket, null);
  await a.sees('ready');
  const pid = h.programPid();
  process.kill(-h.proc.pid!, 'SIGKILL');
  await h.exited;
  await a.until('the link closing', () => a.closed);
  assert.equal(sleeps(m), 1, 'sleep ignored the hangup');
  process.kill(-pid, 'SIGKILL');
  await gone(m);
});

test('bad lines close only the client that sent them; the holder and the others go on', async (t) => {
  const h = await startHolder(t, tui());
  const good = await attach(t, h.socket, null);
  await good.sees('ready');
  const bad = ['not json', '{"type":"paste","data":"x"}', '{"type":"resize","cols":0,"rows":24}', '{"type":"resize","cols":80,"rows":1001}', '{"type":"input","data":""}', '{"type":"input"}'];
  for (const first of ['{"type":"attach"}', '{"type":"input","data":"x"}', 'garbage', '{"type":"attach","offset":-1}']) {
    const s = createConnection(h.socket);
    s.resume();
    s.write(`${first}\n`);
    await within(5000, `closing after ${first}`, new Promise((r) => s.once('close', r)));
  }
  for (const text of bad) {
    const s = createConnection(h.socket);
    let got = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (got += d));
    s.write('{"type":"attach","offset":null}\n');
    await within(5000, 'the screen', new Promise<void>((r) => s.on('data', () => got.includes('\n') && r())));
    assert.match(got, /^\{"type":"screen"/);
    s.write(`${text}\n`);
    await within(5000, `closing after ${text}`, new Promise((r) => s.once('close', r)));
  }
  good.link.send({ type: 'input', data: 'z' });
  await good.sees('key "z"');
  assert.equal(good.closed, false);
  assert.equal(h.proc.exitCode, null);
});

test('a command that cannot run: 127 when not found, 126 when not executable, said on stderr', async (t) => {
  const plain = path.join(makeTempDir(t), 'plain.txt');
  writeFileSync(plain, 'not a program\n', { mode: 0o644 });
  for (const [cmd, code, said] of [
    ['no-such-program-grove', 127, /command not found/],
    [plain, 126, /not an executable/],
  ] as const) {
    const p = spawn(process.execPath, [GROVE, 'pty-hold', '--socket', `/tmp/grove-none-${process.pid}.sock`, '--output', path.join(path.dirname(plain), 'out'), '--cols', '80', '--rows', '24', '--', cmd], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr!.on('data', (d) => (err += d));
    const [status] = await once(p, 'exit');
    assert.equal(status, code, cmd);
    assert.match(err, said);
  }
});

test('grove pty-hold refuses options it cannot use (usage: exit 2)', async () => {
  for (const args of [
    ['pty-hold', '--output', '/tmp/x.out', '--cols', '80', '--rows', '24', '--', 'true'],
    ['pty-hold', '--socket', '/tmp/x.sock', '--cols', '80', '--rows', '24', '--', 'true'],
    ['pty-hold', '--socket', '/tmp/x.sock', '--output', '/tmp/x.out', '--cols', '0', '--rows', '24', '--', 'true'],
    ['pty-hold', '--socket', '/tmp/x.sock', '--output', '/tmp/x.out', '--cols', '80', '--rows', '1001', '--', 'true'],
    ['pty-hold', '--socket', '/tmp/x.sock', '--output', '/tmp/x.out', '--cols', '80', '--rows', '24'],
  ]) {
    const r = await grove('/nonexistent-home', args);
    assert.equal(r.code, 2, args.join(' '));
  }
});

test('a client that does not read holds up neither the program nor the others; once it reads it gets every byte, then the exit', async (t) => {
  const h = await startHolder(t, ['sh', '-c', `echo ready; read x; yes 'a line of output to fill the buffers' | head -c 8000000; echo done; read y; echo end`]);
  const good = await attach(t, h.socket, null);
  await good.sees('ready');
  const slow = createConnection(h.socket);
  t.after(() => slow.destroy());
  slow.pause();
  slow.write('{"type":"attach","offset":0}\n');
  await within(5000, 'connecting', once(slow, 'connect'));
  good.link.send({ type: 'input', data: 'go\r' });
  await good.sees('done');
  good.link.send({ type: 'input', data: 'y\r' });
  await good.until('the exit frame', () => exitOf(good) !== undefined);
  // The slow one has read nothing yet; the program has ended, and the holder waits for it while
  // it reads (one that reads nothing for 2 s after the end is dropped): it reads from now on,
  // before the checks of the other, which take seconds on a loaded machine.
  const lines = new LineBuffer();
  const frames: ServerFrame[] = [];
  slow.setEncoding('utf8');
  slow.on('data', (d: string) => frames.push(...(lines.push(d) ?? []).map((l) => JSON.parse(l) as ServerFrame)));
  slow.resume();
  const slowEnded = within(30_000, 'the slow client ended', once(slow, 'close'));
  slowEnded.catch(() => {}); // awaited below, after the other's checks
  assert.equal(exitOf(good)!.code, 0);
  const s = good.frames[0]!.type === 'screen' ? good.frames[0]!.offset : -1;
  assert.ok(contiguous(good, s));
  const file = readFileSync(h.stdout);
  assert.equal(good.output(), file.subarray(s).toString(), 'the reading client got every byte');
  await slowEnded;
  const out = frames.filter((f) => f.type === 'output');
  assert.equal(out.map((f) => (f.type === 'output' ? f.data : '')).join(''), file.toString(), 'the slow client got every byte from 0');
  assert.deepEqual(frames.at(-1), { type: 'exit', code: 0 });
  assert.equal(await h.exited, 0);
});
