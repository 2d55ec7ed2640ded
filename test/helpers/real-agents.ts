import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { after, before, type TestContext } from 'node:test';
import { MAX_LINE_BYTES } from '../../daemon/runtime/lines.ts';
import { addProject, startDaemon, type Cleanup, type TestDaemon } from './daemon.ts';
import { makeRepo, makeTempDir } from './git.ts';
import { allLines, waitSessionEnd } from './sessions.ts';

function install(prefix: string, pkg: string): string {
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, pkg], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
  return path.join(prefix, 'node_modules', '.bin');
}

// A real agent CLI installed from npm into a temporary folder (never a dependency of grove): the
// folder of its commands, to put first on the daemon's PATH.
export function installCli(t: TestContext, pkg: string): string {
  return install(makeTempDir(t, 'grove-cli-'), pkg);
}

// The same, once for a test file's tests (before the first) into a folder removed after the
// last: call it at the top level, and the returned function in the tests. `then` finishes the
// install in its folder (a postinstall npm held back).
export function installCliForFile(pkg: string, then?: (prefix: string) => void): () => string {
  const prefix = makeTempDir({ after }, 'grove-cli-');
  let bin = '';
  before(() => {
    bin = install(prefix, pkg);
    then?.(prefix);
  });
  return () => bin;
}

// Claude Code's own postinstall, which npm may hold back: it puts the native binary in place.
export function claudePostinstall(prefix: string): void {
  execFileSync(process.execPath, ['install.cjs'], { cwd: path.join(prefix, 'node_modules', '@anthropic-ai', 'claude-code'), stdio: ['ignore', 'ignore', 'inherit'] });
}

// The environment of a daemon that runs a real CLI: its commands (`bin`) first on PATH, a home of
// its own (none of the user's credentials or settings), then `env` (undefined unsets a variable).
export function cliEnv(t: Cleanup, bin: string, env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { PATH: `${bin}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-cli-home-'), ...env };
}

// Starts a session of `body` (agent, prompt, mode, …) on the task: the 201's session.
export async function startSession(d: TestDaemon, task: { id: string }, body: Record<string, unknown>): Promise<any> {
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// Sends a follow-up of `body` (prompt, mode, …) to the session: the 201's new session.
export async function followUp(d: TestDaemon, sessionId: string, body: Record<string, unknown>): Promise<any> {
  const r = await d.socket('POST', `/api/sessions/${sessionId}/messages`, { body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// A session once it has ended, as stored.
export async function endedSession(d: TestDaemon, id: string): Promise<any> {
  await waitSessionEnd(d, id);
  return (await d.socket('GET', `/api/sessions/${id}`)).json;
}

// A session's stdout lines, each parsed as JSON (the ACP bridge writes nothing else there). A line
// over 64 KiB is stored in pieces (DESIGN §3): a piece that does not parse is joined with the next.
export async function stdoutJson(d: TestDaemon, id: string): Promise<any[]> {
  const out: any[] = [];
  let pending = '';
  for (const l of (await allLines(d, id)).filter((x) => x.stream === 'stdout')) {
    pending += l.text;
    try {
      out.push(JSON.parse(pending));
      pending = '';
    } catch (err) {
      if (Buffer.byteLength(l.text) < MAX_LINE_BYTES - 4) throw err;
    }
  }
  if (pending !== '') throw new Error(`the last stdout line is not JSON: ${pending.slice(0, 200)}`);
  return out;
}

// A daemon started with `env` (and a user config, if given), with a project of its own (its files
// as given) and one ready task in it, whose worktree is an absolute path.
export async function daemonWithTask(
  t: Cleanup,
  env: Record<string, string | undefined>,
  opts: { config?: Record<string, unknown>; files?: Record<string, string> } = {},
): Promise<{ d: TestDaemon; task: any; worktree: string }> {
  const d = await startDaemon(t, { env, ...(opts.config ? { config: opts.config } : {}) });
  const project = await addProject(d, makeRepo(t, opts.files ? { files: opts.files } : {}));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'agent work' } })).json;
  if (task.status !== 'ready') throw new Error(`task is ${task.status}`);
  return { d, task, worktree: path.resolve(project.path, task.worktree_path) };
}

// The same, where built-in `agent` (its CLI on the PATH of `env`) is listed as installed and as
// asking through grove.
export async function daemonWithAgent(t: Cleanup, agent: string, env: Record<string, string | undefined>, config?: Record<string, unknown>) {
  const started = await daemonWithTask(t, env, config ? { config } : {});
  const listed = (await started.d.socket('GET', '/api/agents')).json.find((a: any) => a.name === agent);
  assert.deepEqual([listed?.available, listed?.approvals], [true, true], `${agent}: available, asking through grove`);
  return started;
}

// Runs one session of `body` (agent, mode, prompt, …) on the task and waits for its end, doing
// `during` meanwhile (answering its approvals): the stored session, all it printed as one text,
// and its stdout lines parsed as JSON where they are.
export async function runSession(d: TestDaemon, task: { id: string }, body: Record<string, unknown>, during?: (sessionId: string) => Promise<void>) {
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body });
  if (r.status !== 201) throw new Error(`POST sessions: ${r.status} ${r.text}`);
  await during?.(r.json.id);
  try {
    await waitSessionEnd(d, r.json.id);
  } catch (err) {
    // What it waits for, and its last words: a real CLI that never ends says little else.
    const approvals = (await d.socket('GET', `/api/approvals?session_id=${r.json.id}`)).json;
    const last = (await allLines(d, r.json.id)).slice(-15).map((l: any) => l.text);
    throw new Error(`${(err as Error).message}: the session did not end; its approvals ${JSON.stringify(approvals.map((a: any) => [a.kind, a.status, a.input]))}; its last lines:\n${last.join('\n')}`);
  }
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  const lines = await allLines(d, r.json.id);
  const events = lines.filter((l) => l.stream === 'stdout').flatMap((l) => {
    try {
      return [JSON.parse(l.text)];
    } catch {
      return [];
    }
  });
  return { s, said: lines.map((l) => l.text).join('\n'), events };
}

// A local TCP port that nothing listens on (taken from the OS, then released): an agent's model
// endpoint there is refused at once, so a real CLI runs offline up to its first model call.
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// Runs `definition` (a CLI's plain headless command) as a user agent in a new task, with a
// prompt to create ran.txt, to its end: it must exit 0 with ran.txt in the worktree. `opts`: the
// daemon's user config besides the agent, the repository's files.
export async function headlessRanTxt(t: Cleanup, env: Record<string, string | undefined>, definition: Record<string, unknown>, opts: { config?: Record<string, unknown>; files?: Record<string, string> } = {}) {
  const { d, task, worktree } = await daemonWithTask(t, env, { config: { ...opts.config, agents: { headless: definition } }, ...(opts.files ? { files: opts.files } : {}) });
  const run = await runSession(d, task, { agent: 'headless', prompt: 'create ran.txt' });
  assert.equal(run.s.status, 'exited', run.said);
  assert.equal(run.s.exit_code, 0);
  assert.ok(existsSync(path.join(worktree, 'ran.txt')), 'the command ran in the worktree');
  return run;
}
