// `grove attach SESSION` (DESIGN §21) as a person runs it: in a terminal window of its own (a
// pseudo-terminal under script(1)), against a real daemon whose terminal session runs the
// stand-in TUI (test/fixtures/tui.mjs: raw mode, echoes keys, says its size on SIGWINCH, quits on
// `q` with status 3).
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { shortId } from '../../daemon/cli/format.ts';
import { grove } from '../helpers/cli.ts';
import { makeHome, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { AGENT, agentHome, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';
import { sshHostWorld } from '../helpers/sshd.ts';
import { terminalWindow } from '../helpers/tty.ts';

const TUI = path.join(ROOT, 'test', 'fixtures', 'tui.mjs');
// Headless, the fixture agent; in a terminal, the stand-in TUI with the prompt as its title.
const AGENTS = { tui: { command: [AGENT, '{prompt}'], terminal: [process.execPath, TUI, '{prompt}'] } };
const daemon = sharedAgentDaemon({ agents: AGENTS });

async function terminalSession(d: TestDaemon, t: Parameters<typeof readyTaskOn>[1], title: string) {
  const { task } = await readyTaskOn(d, t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: title, interface: 'terminal' } });
  assert.equal(r.status, 201, r.text);
  // Killed if a test fails before it ends (its program would outlive the daemon); a stopped daemon is let be.
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  return { task, s: r.json };
}

const status = async (d: TestDaemon, id: string) => (await d.socket('GET', `/api/sessions/${id}`)).json;

test('grove attach: keys reach the program, the window size and its changes too; Ctrl-\\ detaches (exit 0, it runs on); attached again, the screen as it is; q ends it, its exit said', async (t) => {
  const d = await daemon();
  const { s } = await terminalSession(d, t, 'Attach-Title');
  const id = shortId(s.id);

  const w = terminalWindow(t, d.home, ['attach', id], { cols: 100, rows: 30 });
  // The window's size at connect (the holder's pseudo-terminal starts at another).
  await w.shows('size 100x30');
  await w.shows('ready');
  assert.match(w.output(), /Attach-Title/);
  w.type('ab');
  await w.shows(/key "a"[\s\S]*key "b"/);
  await w.resize(90, 25);
  await w.shows('size 90x25');
  // Ctrl-C is the program's key in raw mode, not a signal to grove.
  w.type('\x03');
  await w.shows('key "\\u0003"');

  w.type('\x1c');
  assert.equal(await w.exited, 0);
  assert.match(w.output(), new RegExp(`detached from session ${id}.*grove attach ${id}`));
  assert.equal((await status(d, s.id)).status, 'running');

  // Attached again: the screen as the program left it, then on.
  const again = terminalWindow(t, d.home, ['attach', s.id], { cols: 90, rows: 25 });
  await again.shows(/Attach-Title[\s\S]*key "b"/);
  const from = again.mark();
  again.type('c');
  await again.shows('key "c"', from);
  again.type('q');
  assert.equal(await again.exited, 0);
  assert.match(again.output(), new RegExp(`session ${id} exited 3`));
  await waitSessionEnd(d, s.id);
  assert.equal((await status(d, s.id)).exit_code, 3);
});

test("grove attach to a task's shell: what it runs comes back; `exit 5` ends it with its status", async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/terminals`);
  assert.equal(r.status, 201, r.text);
  // An interactive shell ignores TERM: killed by the daemon (TERM, then KILL) if the test fails first.
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const w = terminalWindow(t, d.home, ['attach', r.json.id]);
  w.type('echo "task=$GROVE_TASK_ID" done-$((6*7))\r');
  await w.shows('done-42');
  assert.ok(w.output().includes(`task=${task.id}`), w.output());
  w.type('exit 5\r');
  assert.equal(await w.exited, 0);
  assert.match(w.output(), new RegExp(`session ${shortId(r.json.id)} exited 5`));
});

test('a daemon restart does not end grove attach: it waits, comes back from where it was (?offset=), and keys typed meanwhile arrive', async (t) => {
  const home = agentHome(t, { agents: AGENTS });
  const d1 = await startDaemon(t, { home });
  const { s } = await terminalSession(d1, t, 'Restart-Title');
  // The daemon of the moment kills it if the test fails (registered before the second's stop).
  let live = d1;
  t.after(() => live.socket('DELETE', `/api/sessions/${s.id}`).catch(() => {}));
  const w = terminalWindow(t, home, ['attach', s.id]);
  await w.shows('ready');
  w.type('a');
  await w.shows('key "a"');

  await d1.stop();
  const from = w.mark();
  w.type('b');
  const d2 = (live = await startDaemon(t, { home }));
  await w.shows('key "b"', from);
  // Taken up at its offset: the output it missed (none), not the screen redrawn.
  assert.ok(!w.output().slice(from).includes('Restart-Title'), w.output().slice(from));
  w.type('q');
  assert.equal(await w.exited, 0);
  assert.match(w.output(), new RegExp(`session ${shortId(s.id)} exited 3`));
  await waitSessionEnd(d2, s.id);
});

test('grove --host box attach: the same terminal through the SSH forward to that machine’s daemon', async (t) => {
  // Registered before the world's daemon is, so run before it stops: a program left running is killed.
  let kill = async () => {};
  t.after(() => kill());
  const w = await sshHostWorld(t, { agents: AGENTS });
  const { s } = await terminalSession(w.remote, t, 'Far-Title');
  kill = async () => void (await w.remote.socket('DELETE', `/api/sessions/${s.id}`).catch(() => {}));
  const win = terminalWindow(t, w.client, ['--host', 'box', 'attach', shortId(s.id)], { env: w.env, cols: 70, rows: 20 });
  await win.shows(/Far-Title[\s\S]*size 70x20/);
  win.type('z');
  await win.shows('key "z"');
  win.type('q');
  assert.equal(await win.exited, 0);
  assert.match(win.output(), new RegExp(`session ${shortId(s.id)} exited 3`));
});

test('refused: no terminal on stdin (usage, 2); a headless session (NOT_A_TERMINAL, 1); no such session (1); no daemon (3)', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const headless = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'hi' } })).json;
  await waitSessionEnd(d, headless.id);

  const piped = await grove(d.home, ['attach', headless.id]);
  assert.equal(piped.code, 2);
  assert.match(piped.stderr, /grove attach needs a terminal/);

  const w = terminalWindow(t, d.home, ['attach', headless.id]);
  assert.equal(await w.exited, 1);
  assert.match(w.output(), /grove: NOT_A_TERMINAL: session .* is headless/);

  const none = terminalWindow(t, d.home, ['attach', 'ffffffff']);
  assert.equal(await none.exited, 1);
  assert.match(none.output(), /no session matches "ffffffff"/);

  const nowhere = terminalWindow(t, makeHome(t), ['attach', headless.id]);
  assert.equal(await nowhere.exited, 3);
  assert.match(nowhere.output(), /grove daemon is not running/);
});

test('grove session start --terminal starts the agent in a terminal session; grove shell opens the task\'s shell (printed where stdin is no terminal, attached where it is)', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const started = await grove(d.home, ['session', 'start', task.id, '--agent', 'tui', '--prompt', 'From-CLI', '--terminal', '--json']);
  assert.equal(started.code, 0, started.stderr);
  assert.equal(started.json.interface, 'terminal');
  t.after(() => d.socket('DELETE', `/api/sessions/${started.json.id}`).catch(() => {}));
  const human = await grove(d.home, ['session', 'start', task.id, '--agent', 'tui', '--prompt', 'Two', '--terminal']);
  const second = /session (\S+)/.exec(human.stdout)![1]!;
  t.after(() => d.socket('DELETE', `/api/sessions/${second}`).catch(() => {}));
  assert.match(human.stdout, new RegExp(`grove attach ${shortId(second)} shows its terminal`));

  const shell = await grove(d.home, ['shell', task.id, '--json']);
  assert.equal(shell.code, 0, shell.stderr);
  assert.deepEqual([shell.json.kind, shell.json.agent, shell.json.interface], ['terminal', null, 'terminal']);
  t.after(() => d.socket('DELETE', `/api/sessions/${shell.json.id}`).catch(() => {}));
  // On a terminal: opened and attached at once; its prompt comes, a command runs, Ctrl-\ leaves it running.
  const w = terminalWindow(t, d.home, ['shell', task.id], { cols: 100, rows: 30 });
  await w.shows(/[$#] $/);
  w.type('echo shell-$((6*7))\r');
  await w.shows('shell-42');
  w.type('\x1c');
  assert.equal(await w.exited, 0);
  const sessions = (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json;
  assert.equal(sessions.filter((s: any) => s.kind === 'terminal' && s.status === 'running').length, 2);
  for (const s of sessions) await d.socket('DELETE', `/api/sessions/${s.id}`);
});
