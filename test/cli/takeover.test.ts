import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { addProject, ROOT, sharedDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { agentHome, waitSessionEnd } from '../helpers/sessions.ts';

// `grove takeover` in a terminal: the CLI run under a pseudo-terminal (util-linux `script`), as a
// person runs it, with the fixture's interactive resume reading a line from that terminal.
const GROVE = path.join(ROOT, 'bin', 'grove.js');
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const INTERACTIVE = path.join(ROOT, 'test', 'fixtures', 'interactive-agent.sh');
const RESUME = [STREAM, '--resume', '{session}', '--', '{prompt}'];
const AGENTS = {
  talk: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: RESUME, interactive: [INTERACTIVE, '--resume', '{session}'], format: 'claude' },
  headless: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: RESUME, format: 'claude' },
};
const daemon = sharedDaemon((c) => ({ home: agentHome(c, { agents: AGENTS }) }));

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

// `grove …` with a terminal of its own: what it printed there, lines typed into it, its exit code.
function inTerminal(t: TestContext, home: string, args: string[]) {
  const line = [process.execPath, GROVE, ...args].map(quote).join(' ');
  // PORT and GROVE_PORT of the person's shell are not the task's: the task's win.
  const p = spawn('script', ['-qec', line, '/dev/null'], { env: { ...process.env, GROVE_HOME: home, PORT: '1', GROVE_PORT: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => p.kill('SIGKILL'));
  let out = '';
  const seen: Array<() => void> = [];
  p.stdout.on('data', (d) => {
    out += d;
    for (const f of seen) f();
  });
  p.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number>((resolve) => p.once('exit', (code) => resolve(code ?? -1)));
  return {
    output: () => out,
    type: (text: string) => p.stdin.write(`${text}\n`),
    // Resolves once the terminal shows `text`.
    shows: (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => out.includes(text) && resolve();
        seen.push(check);
        check();
        void exited.then(() => (out.includes(text) ? resolve() : reject(new Error(`the terminal never showed ${text}:\n${out}`))));
      }),
    // The terminal goes away (its window closed): its master side is closed, as `script` dies.
    close: () => p.kill('SIGKILL'),
    exited,
  };
}

// The CLI without a terminal: for its refusals.
function grove(home: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [GROVE, ...args], { env: { ...process.env, GROVE_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.once('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function conversation(d: TestDaemon, t: TestContext, agent = 'talk') {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ ports: [3000], env: { HOME_MARK: 'project' } }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'by hand' } })).json;
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent, prompt: 'start' } })).json;
  await waitSessionEnd(d, first.id);
  const done = (await d.socket('GET', `/api/sessions/${first.id}`)).json;
  return { task, first: done, worktree: path.join(repo, task.worktree_path) };
}

const sessionsOf = async (d: TestDaemon, c: { task: any; first: any }) =>
  (await d.socket('GET', `/api/tasks/${c.task.id}/sessions?conversation_id=${c.first.conversation_id}`)).json as any[];

test('grove takeover: the interactive resume in this terminal, in the worktree with the task variables; recorded with its exit code; grove say continues the same agent session', async (t) => {
  const d = await daemon();
  const c = await conversation(d, t);
  const agentId = c.first.agent_session_id;

  const term = inTerminal(t, d.home, ['takeover', c.first.id.slice(0, 8), '--', '--extra']);
  await term.shows('ready');
  const running = (await sessionsOf(d, c)).at(-1);
  assert.equal(running.kind, 'interactive');
  assert.equal(running.status, 'running');
  term.type('3');
  assert.equal(await term.exited, 3, `the agent's exit code:\n${term.output()}`);

  const out = readFileSync(path.join(c.worktree, 'takeover.out'), 'utf8');
  assert.match(out, /^tty=yes$/m, 'the agent had the terminal');
  assert.match(out, /^line=3$/m);
  assert.match(out, new RegExp(`^resume=${agentId}$`, 'm'));
  assert.match(out, new RegExp(`^args=--resume ${agentId} --extra$`, 'm'));
  assert.match(out, new RegExp(`^GROVE_TASK_ID=${c.task.id}$`, 'm'));
  assert.match(out, new RegExp(`^GROVE_SESSION_ID=${running.id}$`, 'm'));
  assert.match(out, new RegExp(`^GROVE_PORT_3000=${c.task.ports['3000']}$`, 'm'));
  assert.match(out, new RegExp(`^PORT=${c.task.ports['3000']}$`, 'm'));
  assert.match(out, /^HOME_MARK=project$/m);
  assert.match(term.output(), /talk resumes its conversation here/);
  assert.match(term.output(), /interactive session \w+ failed \(exit 3\)/);

  const [first, interactive] = await sessionsOf(d, c);
  assert.equal(first.id, c.first.id);
  assert.equal(interactive.kind, 'interactive');
  assert.equal(interactive.status, 'failed');
  assert.equal(interactive.exit_code, 3);
  assert.equal(interactive.agent_session_id, agentId);
  const ls = await grove(d.home, ['session', 'ls', c.task.id]);
  assert.match(ls.stdout, new RegExp(`${interactive.id.slice(0, 8)}\\s+\\S+\\s+interactive talk\\s+edit\\s+UNCONFINED\\s+failed\\s+3\\s+taken over in a terminal`));

  // `grove say` after it: the conversation's agent resumes the same session, headless.
  const said = await grove(d.home, ['say', interactive.id.slice(0, 8), 'and now', '--json']);
  assert.equal(said.code, 0, said.stderr);
  const next = (await sessionsOf(d, c)).at(-1);
  await waitSessionEnd(d, next.id);
  assert.deepEqual(next.command, [STREAM, '--resume', agentId, '--', 'and now']);
  assert.equal(next.parent_id, interactive.id);

  // Refused: a conversation whose turn runs (409), an agent with no interactive resume (422).
  const busy = await d.socket('POST', `/api/sessions/${next.id}/messages`, { body: { prompt: 'sleep:30' } });
  const refused = await grove(d.home, ['takeover', next.id]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /SESSION_RUNNING/);
  await d.socket('DELETE', `/api/sessions/${busy.json.id}`);
  const other = await conversation(d, t, 'headless');
  const unsupported = await grove(d.home, ['takeover', other.first.id]);
  assert.equal(unsupported.code, 1);
  assert.match(unsupported.stderr, /TAKEOVER_UNSUPPORTED: agent headless has no interactive resume/);
});

test('grove takeover killed: the daemon ends its session (lost) once the CLI is gone', async (t) => {
  const d = await daemon();
  const c = await conversation(d, t);
  const term = inTerminal(t, d.home, ['takeover', c.first.id]);
  await term.shows('ready');
  const running = (await sessionsOf(d, c)).at(-1);
  assert.equal(running.kind, 'interactive');
  const ended = d.waitForLog((l) => l.msg === 'interactive session ended' && l.session === running.id, 30_000);
  process.kill(running.pid, 'SIGKILL');
  await ended;
  const lost = (await d.socket('GET', `/api/sessions/${running.id}`)).json;
  assert.equal(lost.status, 'lost');
  assert.equal(lost.exit_code, null);
  await term.exited;
});

test('grove takeover in a terminal that closes: the agent gets its hang-up, and the CLI still records its end', async (t) => {
  const d = await daemon();
  const c = await conversation(d, t);
  const term = inTerminal(t, d.home, ['takeover', c.first.id]);
  await term.shows('ready');
  const running = (await sessionsOf(d, c)).at(-1);
  const ended = d.waitForLog((l) => l.msg === 'interactive session ended' && l.session === running.id, 30_000);
  term.close();
  await ended;
  const after = (await d.socket('GET', `/api/sessions/${running.id}`)).json;
  assert.equal(after.status, 'failed', JSON.stringify(after));
  assert.equal(after.exit_code, 129, 'ended by SIGHUP, as a shell says it');
});

test('grove takeover stopped by grove (DELETE): the CLI passes the TERM on to the agent, and the session ends killed', async (t) => {
  const d = await daemon();
  const c = await conversation(d, t);
  const term = inTerminal(t, d.home, ['takeover', c.first.id]);
  await term.shows('ready');
  const running = (await sessionsOf(d, c)).at(-1);
  const del = await d.socket('DELETE', `/api/sessions/${running.id}`);
  assert.deepEqual(del.json, { status: 'killed' });
  assert.equal(await term.exited, 143, `the agent ended by TERM:\n${term.output()}`);
  assert.match(term.output(), /interactive session \w+ was stopped by grove/);
  assert.equal((await d.socket('GET', `/api/sessions/${running.id}`)).json.status, 'killed');
});
