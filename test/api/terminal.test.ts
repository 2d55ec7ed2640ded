// Terminal sessions (DESIGN §21) through a real daemon: a stand-in TUI agent under a real
// pseudo-terminal, attached over the WebSocket on the TCP front and the socket; the task's shell;
// the guards; a daemon restart under a running program; what is refused.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
import type { ServerFrame } from '../../schemas/terminal.ts';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { AGENT, agentHome, allLines, liveGroupMembers, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { attach, programPid } from '../helpers/terminal.ts';

const TUI = path.join(ROOT, 'test', 'fixtures', 'tui.mjs');
const AGENTS = {
  // headless, the fixture; in a terminal, the stand-in TUI with the prompt as its title
  tui: { command: [AGENT, '{prompt}'], terminal: [process.execPath, TUI, '{prompt}'], interactive: [process.execPath, TUI, 'resumed-{session}'] },
  // Claude Code's interface as a stand-in: named `claude`, it writes Claude Code's transcript
  claudish: {
    command: [AGENT, '{prompt}'],
    terminal: [path.join(ROOT, 'test', 'fixtures', 'claude-tui', 'claude'), '--session-id', '{session}', '--', '{prompt}'],
    interactive: [path.join(ROOT, 'test', 'fixtures', 'claude-tui', 'claude'), '--resume', '{session}'],
    sandbox: { write: ['~/.claude'] },
  },
  // a terminal that runs the prompt as a shell script
  script: { command: [AGENT, '{prompt}'], terminal: ['sh', '-c', '{prompt}'] },
  // a mode of its own in the terminal, and a command of its own to continue there
  moded: {
    command: [AGENT, '{prompt}'],
    modes: { read: ['--headless-read'], edit: [] },
    terminal: [process.execPath, TUI, 'first-{session}', '{prompt}'],
    terminal_modes: { read: ['--terminal-read'] },
    terminal_resume: [process.execPath, TUI, 'again-{session}', '{prompt}'],
  },
};
const daemon = sharedAgentDaemon({ agents: AGENTS });

async function terminalSession(t: Parameters<typeof readyTaskOn>[1], prompt = 'Hello-TUI') {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt, interface: 'terminal' } });
  assert.equal(r.status, 201, r.text);
  // Killed if the test fails before it ends: its program would outlive the shared daemon.
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  return { d, task, s: r.json };
}

test('a terminal session: the screen first, a real TTY, keys echoed, resize reaches the program, quit ends it with its status', async (t) => {
  const { d, s } = await terminalSession(t);
  assert.equal(s.interface, 'terminal');
  assert.equal(s.kind, 'agent');
  const c = await attach(t, d, s.id);
  const first = await c.waitFrame(() => true);
  assert.equal(first.type, 'screen');
  await c.waitText('ready');
  assert.match(c.text(), /Hello-TUI/);
  assert.match(c.text(), /tty yes/);
  assert.match(c.text(), /size 120x40/);
  c.send({ type: 'input', data: 'x' });
  await c.waitText('key "x"');
  c.send({ type: 'resize', cols: 100, rows: 30 });
  await c.waitText('size 100x30');
  c.send({ type: 'input', data: 'q' });
  const exit = await c.waitFrame((f) => f.type === 'exit');
  assert.deepEqual(exit, { type: 'exit', code: 3 });
  assert.equal((await c.closed).code, 1000);
  await waitSessionEnd(d, s.id);
  const after = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.equal(after.status, 'failed');
  assert.equal(after.exit_code, 3);
  // Stored as lines, seq without gaps.
  const lines = await allLines(d, s.id);
  assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i + 1));
  assert.ok(lines.some((l) => l.text.includes('key "x"')), JSON.stringify(lines));
  assert.ok(lines.some((l) => l.text.includes('bye')));
  // Attached after its end: what it printed, then its exit.
  const late = await attach(t, d, s.id, { via: 'socket' });
  await late.waitFrame((f) => f.type === 'exit');
  assert.match(late.text(), /bye/);
  assert.deepEqual(late.frames.at(-1), { type: 'exit', code: 3 });
});

test('two clients see the same bytes; a reconnect with ?offset= gets exactly what it missed', async (t) => {
  const { d, s } = await terminalSession(t);
  const a = await attach(t, d, s.id);
  const b = await attach(t, d, s.id, { via: 'socket' });
  await Promise.all([a.waitText('ready'), b.waitText('ready')]);
  a.send({ type: 'input', data: '1' });
  await Promise.all([a.waitText('key "1"'), b.waitText('key "1"')]);
  const at = b.offset();
  b.close();
  await b.closed;
  a.send({ type: 'input', data: '23' });
  await a.waitText('key "3"');
  const again = await attach(t, d, s.id, { offset: at });
  await again.waitText('key "3"');
  assert.equal(again.frames[0]!.type, 'output', 'a kept offset gets output, not the screen');
  assert.equal((again.frames[0] as { offset: number }).offset, at);
  assert.ok(!again.text().includes('key "1"'), 'nothing it had seen comes again');
  assert.match(again.text(), /key "2"[\s\S]*key "3"/);
  // Both ends saw the same bytes from that offset.
  const aBytes = Buffer.from(a.text()).subarray(Buffer.byteLength(a.text()) - (a.offset() - at)).toString();
  assert.equal(again.text(), aBytes);
  a.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, s.id);
});

test('a client that does not read holds up neither the program nor another client; once it reads it gets every byte from its offset, then the exit', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const script = "echo ready; read x; yes 'a line of output to fill the buffers' | head -c 12000000; echo done; read y; echo end";
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'script', prompt: script, interface: 'terminal' } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const good = await attach(t, d, r.json.id);
  await good.waitText('ready');
  // Through the front, from offset 0, and reading nothing until the program has ended.
  const slow = new WebSocket(`ws://127.0.0.1:${d.port}/api/sessions/${r.json.id}/terminal?offset=0`);
  t.after(() => slow.terminate());
  const frames: ServerFrame[] = [];
  slow.on('message', (data) => frames.push(JSON.parse(data.toString()) as ServerFrame));
  const slowClosed = new Promise<number>((resolve) => slow.on('close', (code) => resolve(code)));
  await new Promise((resolve) => slow.once('open', resolve));
  slow.pause();
  good.send({ type: 'input', data: 'go\r' });
  await good.waitText('done', 60_000);
  good.send({ type: 'input', data: 'y\r' });
  assert.deepEqual(await good.waitFrame((f) => f.type === 'exit', 60_000), { type: 'exit', code: 0 });
  const file = readFileSync(path.join(d.home, 'data', 'sessions', r.json.id, 'stdout'));
  assert.ok(file.length > 12_000_000);
  assert.ok(frames.length < 100, `the slow client had read little (${frames.length} frames)`);
  slow.resume();
  assert.equal(await slowClosed, 1000, 'closed as the session ended, not cut');
  assert.deepEqual(frames.at(-1), { type: 'exit', code: 0 });
  const out = frames.filter((f) => f.type === 'output') as Array<{ offset: number; data: string }>;
  let at = 0;
  for (const f of out) {
    assert.equal(f.offset, at, 'contiguous');
    at += Buffer.byteLength(f.data);
  }
  assert.equal(at, file.length);
  assert.ok(out.map((f) => f.data).join('') === file.toString(), 'every byte, as the file has it');
});

test('refused: a headless session (409 NOT_A_TERMINAL), no session (404), a cross-site page (403), a bad offset (400)', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const headless = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'echo:hi' } })).json;
  assert.equal(headless.interface, 'headless');
  await assert.rejects(attach(t, d, headless.id), (e: any) => e.status === 409 && e.body.code === 'NOT_A_TERMINAL');
  await assert.rejects(attach(t, d, '00000000-0000-4000-8000-000000000000', { via: 'socket' }), (e: any) => e.status === 404 && e.body.code === 'NOT_FOUND');
  const s = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'T', interface: 'terminal' } })).json;
  await assert.rejects(attach(t, d, s.id, { headers: { origin: 'http://evil.example' } }), (e: any) => e.status === 403 && e.body.code === 'FORBIDDEN_ORIGIN');
  await assert.rejects(attach(t, d, s.id, { headers: { 'sec-fetch-site': 'cross-site' } }), (e: any) => e.status === 403 && e.body.code === 'FORBIDDEN_ORIGIN');
  await assert.rejects(attach(t, d, s.id, { headers: { host: 'evil.example' } }), (e: any) => e.status === 403 && e.body.code === 'FORBIDDEN_HOST');
  for (const bad of ['-1', 'x', '1.5', '1&colour=red']) {
    await assert.rejects(attach(t, d, s.id, { offset: bad }), (e: any) => e.status === 400 && e.body.code === 'VALIDATION_FAILED', bad);
  }
  // The same-origin dashboard may.
  const ok = await attach(t, d, s.id, { headers: { origin: `http://127.0.0.1:${d.port}` } });
  await ok.waitText('ready');
  await d.socket('DELETE', `/api/sessions/${s.id}`);
});

test('interface: another value is 400, an agent without a terminal command 422 INTERFACE_UNSUPPORTED; nothing starts', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const other = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'x', interface: 'gui' } });
  assert.equal(other.status, 400);
  assert.equal(other.json.code, 'VALIDATION_FAILED');
  const none = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'fixture', prompt: 'x', interface: 'terminal' } });
  assert.equal(none.status, 422, none.text);
  assert.equal(none.json.code, 'INTERFACE_UNSUPPORTED');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, []);
});

test("a task's shell: kind terminal, no agent, in the worktree with the task's environment", async (t) => {
  const { d, task, project } = await readyTaskOn(await daemon(), t);
  const r = await d.tcp('POST', `/api/tasks/${task.id}/terminals`);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.kind, 'terminal');
  assert.equal(r.json.agent, null);
  assert.equal(r.json.interface, 'terminal');
  assert.equal(r.json.sandbox.confined, false);
  const c = await attach(t, d, r.json.id);
  // Typed once the shell prompts: what comes before may be flushed as it sets its terminal up.
  await c.waitText(/[$#] $/);
  c.send({ type: 'input', data: 'echo "id=$GROVE_TASK_ID"; pwd; echo done-$((6*7))\r' });
  await c.waitText('done-42');
  assert.ok(c.text().includes(`id=${task.id}`), `id=${task.id} in ${c.text()}`);
  const cwd = path.resolve(project.path, task.worktree_path);
  assert.ok(c.text().includes(`\r\n${cwd}\r\n`), `pwd ${cwd} in ${c.text()}`);
  c.send({ type: 'input', data: 'exit 5\r' });
  assert.deepEqual(await c.waitFrame((f) => f.type === 'exit'), { type: 'exit', code: 5 });
});

test('a follow-up to a running terminal session is typed into it (200, the same session)', async (t) => {
  const { d, s } = await terminalSession(t);
  const c = await attach(t, d, s.id);
  await c.waitText('ready');
  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'ab' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, s.id);
  await c.waitText(/key "a"[\s\S]*key "b"[\s\S]*key "\\r"/);
  assert.equal((await d.socket('GET', `/api/tasks/${s.task_id}/sessions`)).json.length, 1);
  c.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, s.id);
});

test("an agent's terminal_modes and terminal_resume: the mode's own arguments in the terminal; a follow-up to the ended session continues it there", async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const full = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'moded', prompt: 'hi', interface: 'terminal', mode: 'full' } });
  assert.deepEqual([full.status, full.json.code], [422, 'MODE_UNSUPPORTED'], full.text);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'moded', prompt: 'hello', interface: 'terminal', mode: 'read' } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const pinned = r.json.agent_session_id;
  assert.match(pinned, /^[0-9a-f-]{36}$/);
  assert.deepEqual(r.json.command, [process.execPath, TUI, `first-${pinned}`, '--terminal-read', 'hello']);
  const c = await attach(t, d, r.json.id);
  await c.waitText('ready');
  c.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, r.json.id);
  const next = await d.socket('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: 'more' } });
  assert.equal(next.status, 201, next.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${next.json.id}`).catch(() => {}));
  assert.notEqual(next.json.id, r.json.id);
  assert.equal(next.json.interface, 'terminal');
  assert.deepEqual(next.json.command, [process.execPath, TUI, `again-${pinned}`, '--terminal-read', 'more']);
  const again = await attach(t, d, next.json.id);
  await again.waitText(`again-${pinned}`);
  again.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, next.json.id);
});

test("a terminal session's conversation from its agent's transcript: GET /api/sessions/:id/transcript (its lines, the result read from them); a headless session is 409, a shell has none", async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'claudish', prompt: 'what is up', interface: 'terminal' } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const c = await attach(t, d, r.json.id);
  await c.waitText('ready');
  const view = await until(async () => {
    const v = (await d.socket('GET', `/api/sessions/${r.json.id}/transcript`)).json;
    return v.lines?.length === 2 && v;
  }, 'the transcript read', 20_000);
  assert.equal(view.kind, 'claude');
  assert.equal(view.truncated, false);
  assert.deepEqual(view.lines.map((l: any) => [l.seq, l.stream]), [[1, 'stdout'], [2, 'stdout']]);
  const [user, answer] = view.lines.map((l: any) => JSON.parse(l.text));
  assert.deepEqual([user.type, user.message.content, user.sessionId], ['user', 'what is up', r.json.agent_session_id]);
  assert.equal(answer.message.content[0].text, 'Answer to: what is up');
  assert.equal(view.lines[1].at, new Date(answer.timestamp).toISOString(), "each line at its own time");
  // The same transcript is the session's result.
  const s = await until(async () => {
    const x = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
    return x.result?.text === 'Answer to: what is up' && x;
  }, 'the result', 20_000);
  assert.equal(s.status, 'running');
  c.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, r.json.id);
  assert.equal((await d.socket('GET', `/api/sessions/${r.json.id}/transcript`)).json.lines.length, 2, 'read after its end too');

  const headless = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'echo:hi' } })).json;
  const refused = await d.socket('GET', `/api/sessions/${headless.id}/transcript`);
  assert.deepEqual([refused.status, refused.json.code], [409, 'NOT_A_TERMINAL']);
  const shell = await d.socket('POST', `/api/tasks/${task.id}/terminals`);
  assert.equal(shell.status, 201, shell.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${shell.json.id}`).catch(() => {}));
  assert.deepEqual((await d.socket('GET', `/api/sessions/${shell.json.id}/transcript`)).json, { kind: null, lines: [], truncated: false });
  assert.equal((await d.socket('GET', '/api/sessions/00000000-0000-4000-8000-000000000000/transcript')).status, 404);
  await d.socket('DELETE', `/api/sessions/${shell.json.id}`);
  await waitSessionEnd(d, headless.id);
});

test('bad frames close that client with a code and reason; the session and the daemon go on', async (t) => {
  const { d, s } = await terminalSession(t);
  const cases: Array<[string, number]> = [
    ['not json', 1007],
    [JSON.stringify({ type: 'paste', data: 'x' }), 1003],
    [JSON.stringify({ type: 'resize', cols: 0, rows: 10 }), 1007],
    [JSON.stringify({ type: 'resize', cols: 1001, rows: 10 }), 1007],
    [JSON.stringify({ type: 'input', data: 'x'.repeat(1024 * 1024 + 1) }), 1009],
  ];
  for (const [frame, code] of cases) {
    const c = await attach(t, d, s.id);
    await c.waitText('ready');
    c.send(frame);
    const closed = await c.closed;
    assert.equal(closed.code, code, frame.slice(0, 40));
    assert.ok(closed.reason.length > 0);
  }
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.status, 'running');
  const c = await attach(t, d, s.id);
  c.send({ type: 'input', data: 'q' });
  await c.waitFrame((f) => f.type === 'exit');
});

test('kill: the program and its holder are gone, nothing left running', async (t) => {
  const { d, s } = await terminalSession(t);
  const c = await attach(t, d, s.id);
  await c.waitText('ready');
  const pid = programPid(d, s.id);
  assert.ok(liveGroupMembers(pid).includes(pid), "the program runs");
  const r = await d.socket('DELETE', `/api/sessions/${s.id}`);
  assert.equal(r.status, 200, r.text);
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.status, 'killed');
  assert.deepEqual(liveGroupMembers(s.pid), []);
  assert.deepEqual(liveGroupMembers(pid), []);
  await c.closed;
});

test('a link to the holder that ends before its exit frame is not the session ending: the client is told to come back (1001), and back it gets the end', async (t) => {
  const { d, s } = await terminalSession(t);
  const c = await attach(t, d, s.id);
  await c.waitText('ready');
  // The holder killed outright: its links end with no exit frame, as when it cuts one that is
  // too far behind.
  const stat = readFileSync(`/proc/${programPid(d, s.id)}/stat`, 'utf8');
  const holder = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  assert.match(readFileSync(`/proc/${holder}/cmdline`, 'utf8'), /pty-hold/);
  process.kill(holder, 'SIGKILL');
  const closed = await c.closed;
  assert.equal(closed.code, 1001, closed.reason);
  assert.ok(!c.frames.some((f) => f.type === 'exit'));
  // Back as a client comes back (the CLI's attach): again on each 1001, while the daemon stores
  // the end of a session whose holder is gone (its agent's turn first), up to a minute.
  let back = await attach(t, d, s.id, { offset: c.offset() });
  const deadline = Date.now() + 60_000;
  while ((await back.closed).code === 1001 && Date.now() < deadline) back = await attach(t, d, s.id, { offset: c.offset() });
  const exit = await back.waitFrame((f) => f.type === 'exit');
  assert.equal((await back.closed).code, 1000);
  const ended = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.deepEqual(exit, { type: 'exit', code: ended.exit_code });
});

test('the program outlives a daemon restart with its screen; lines stored without gaps; the client comes back with ?offset=', async (t) => {
  const home = agentHome(t, { agents: AGENTS });
  const d1 = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d1, t);
  const s = (await d1.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'Kept-Screen', interface: 'terminal' } })).json;
  const c = await attach(t, d1, s.id);
  await c.waitText('ready');
  c.send({ type: 'input', data: 'a' });
  await c.waitText('key "a"');
  const pid = programPid(d1, s.id);
  const at = c.offset();
  await d1.stop();
  assert.equal((await c.closed).code, 1001, 'told to come back');
  const d2 = await startDaemon(t, { home });
  await d2.waitForLog((l) => l.msg === 're-attached to running session' && l.session === s.id);
  assert.ok(liveGroupMembers(pid).includes(pid), "the program runs");
  // A new client: the screen as it is.
  const fresh = await attach(t, d2, s.id);
  const screen = await fresh.waitFrame(() => true);
  assert.equal(screen.type, 'screen');
  assert.match(fresh.text(), /Kept-Screen/);
  assert.match(fresh.text(), /key "a"/);
  // The old client's offset: nothing new was printed, so nothing comes until a key.
  const back = await attach(t, d2, s.id, { offset: at });
  back.send({ type: 'input', data: 'b' });
  await back.waitText('key "b"');
  assert.equal(back.frames[0]!.type, 'output');
  assert.ok(!back.text().includes('key "a"'));
  back.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d2, s.id);
  const lines = await allLines(d2, s.id);
  assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i + 1));
  const all = lines.map((l) => l.text).join('\n');
  assert.match(all, /key "a"[\s\S]*key "b"[\s\S]*bye/);
});

test('200 clients attaching and leaving at once leave the daemon healthy, with no socket left open', async (t) => {
  const { d, s } = await terminalSession(t);
  const first = await attach(t, d, s.id);
  await first.waitText('ready').catch(async (e) => {
    console.log(JSON.stringify((await d.socket('GET', `/api/sessions/${s.id}`)).json), JSON.stringify(await allLines(d, s.id)), first.frames);
    throw e;
  });
  const fds = () => readdirSync(`/proc/${d.proc.pid}/fd`).length;
  const before = fds();
  const clients = await Promise.all(Array.from({ length: 200 }, (_, i) => attach(t, d, s.id, { via: i % 2 ? 'socket' : 'tcp' })));
  await Promise.all(clients.map((c) => c.waitFrame(() => true)));
  for (const c of clients) c.close();
  await Promise.all(clients.map((c) => c.closed));
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
  // Every connection's descriptors are given back (the front's, the socket's, the holder links').
  const deadline = Date.now() + 10_000;
  while (fds() > before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok(fds() <= before + 2, `${fds()} descriptors open, ${before} before`);
  first.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, s.id);
});

test('frames sent at once on open (the window size, keys typed) reach the program: none is lost while the daemon attaches to the holder', async (t) => {
  const { d, s } = await terminalSession(t);
  const first = await attach(t, d, s.id);
  await first.waitText('ready');
  for (const [i, via] of (['tcp', 'socket', 'tcp'] as const).entries()) {
    const c = await attach(t, d, s.id, { via, onOpen: [{ type: 'resize', cols: 70 + i, rows: 20 }, { type: 'input', data: `${i}` }] });
    await c.waitText(`size ${70 + i}x20`);
    await c.waitText(`key "${i}"`);
  }
  first.send({ type: 'input', data: 'q' });
  await waitSessionEnd(d, s.id);
});
