// `npm run test:agents`: the built-in `claude` agent against the real Claude Code CLI,
// installed from npm into a temporary folder (never a dependency of grove). Without
// credentials it prints a few stream-json lines and exits 1; grove must capture all of them,
// with the session id it pinned, and a follow-up must run `claude … --resume <that id>`.
// Against a scripted model (test/helpers/model-server.ts) it really calls tools: what each mode
// lets run, and how its permission prompt tool (MCP, stdio) and PreToolUse hooks are asked and answered.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, test, type TestContext } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { addProject, DAEMON_ENTRY, makeHome, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { claudeModelEnv, startModelServer, toolNames, toolResults, type ModelServer, type Turn } from '../helpers/model-server.ts';
import { claudePostinstall, installCliForFile } from '../helpers/real-agents.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

// The CLI, installed once for this file's tests (before the first) into a folder removed after
// the last. The version these tests were read against, 2.1.197: the last that runs on Node 20
// (from 2.1.198 it needs Node 22, so npm on Node 20 picked it by itself). Later releases answer
// several cases below differently (a hook's error, a permission tool's allow without updatedInput,
// plan mode, a denial): a newer Claude Code is taken on purpose, with the tests read against it.
const CLAUDE_CODE = '@anthropic-ai/claude-code@2.1.197';
const claudeBin = installCliForFile(CLAUDE_CODE, claudePostinstall);

test('the built-in claude agent runs the real CLI; without credentials it fails with exit 1, every line captured; a follow-up resumes its session id', async (t) => {
  const bin = claudeBin();

  // No credentials anywhere: a home of its own and no API key.
  const userHome = makeTempDir(t, 'grove-claude-home-');
  mkdirSync(path.join(userHome, '.config'), { recursive: true });
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: userHome, ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: undefined };
  const d = await startDaemon(t, { env });
  const agents = (await d.socket('GET', '/api/agents')).json;
  assert.equal(agents.find((a: any) => a.name === 'claude').available, true);
  assert.equal(agents.find((a: any) => a.name === 'claude').approvals, true, 'the built-in claude asks through grove');

  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'claude' } })).json;
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'claude', prompt: '- say hello' } });
  assert.equal(r.status, 201, r.text);
  const id = r.json.agent_session_id;
  assert.match(id, /^[0-9a-f-]{36}$/);
  // In edit (and read), grove's approval server is Claude Code's permission prompt tool, told the
  // session's own socket (DESIGN §18).
  const bridge = (session: string) => [
    '--mcp-config',
    JSON.stringify({ mcpServers: { grove: { type: 'stdio', command: process.execPath, args: [DAEMON_ENTRY, 'approval-mcp', '--session', session], env: { GROVE_SOCKET: path.join(d.home, 'data', 'run', session, 'grove.sock') }, timeout: 2 ** 31 - 1 } } }),
    '--permission-prompt-tool',
    'mcp__grove__approve',
  ];
  assert.deepEqual(r.json.command, ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--session-id', id, '--permission-mode', 'acceptEdits', ...bridge(r.json.id), '--', '- say hello']);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'failed');
  assert.equal(s.exit_code, 1);

  const lines = await allLines(d, r.json.id);
  const stdout = lines.filter((l) => l.stream === 'stdout');
  assert.ok(stdout.length >= 1, 'it printed something');
  // A prompt that starts with `-` reached it as text, not as an option.
  assert.ok(!lines.some((l) => /unknown option|Usage:/i.test(l.text)), lines.map((l) => l.text).join('\n'));
  const events = stdout.map((l) => JSON.parse(l.text));
  assert.equal(events[0].type, 'system');
  assert.equal(events[0].session_id, id, 'Claude Code took the pinned session id');
  assert.equal(events.at(-1).type, 'result');
  assert.equal(s.agent_session_id, id);
  assert.equal(s.result.is_error, true, 'its result, read from the last line');
  assert.equal(s.result.text, events.at(-1).result);

  // The same command run directly, in the same place with the same environment, prints as many lines.
  const cleanEnv = { ...process.env, ...env } as NodeJS.ProcessEnv;
  delete cleanEnv.ANTHROPIC_API_KEY;
  delete cleanEnv.CLAUDE_CODE_OAUTH_TOKEN;
  // A fresh session id: Claude Code refuses one that is already taken.
  const direct = spawnSync(path.join(bin, 'claude'), r.json.command.slice(1).map((a: string) => (a === id ? randomUUID() : a)), {
    cwd: path.join(project.path, task.worktree_path),
    env: cleanEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  assert.equal(direct.status, 1);
  const count = (s: string) => s.split('\n').filter((l, i, a) => l !== '' || i < a.length - 1).length;
  assert.equal(stdout.length, count(direct.stdout), 'stdout lines');
  assert.equal(lines.length - stdout.length, count(direct.stderr), 'stderr lines');

  // A follow-up: Claude Code's resume command with the captured id, the mode again, the prompt as text.
  const f = await d.tcp('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: '- and now?' } });
  assert.equal(f.status, 201, f.text);
  assert.deepEqual(f.json.command, ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--resume', id, '--permission-mode', 'acceptEdits', ...bridge(f.json.id), '--', '- and now?']);
  assert.equal(f.json.conversation_id, r.json.id);
  await waitSessionEnd(d, f.json.id);
  const fLines = await allLines(d, f.json.id);
  assert.ok(fLines.length >= 1);
  assert.ok(!fLines.some((l) => /unknown option|Usage:/i.test(l.text)), fLines.map((l) => l.text).join('\n'));

  // As root, Claude Code refuses its no-prompt mode: grove does not work around it, the session
  // fails with Claude Code's own message in its output.
  if (process.getuid?.() === 0) {
    const full = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'claude', prompt: 'hi', mode: 'full' } });
    assert.ok(full.json.command.includes('bypassPermissions'));
    assert.ok(!full.json.command.includes('--permission-prompt-tool'), 'full asks nothing');
    await waitSessionEnd(d, full.json.id);
    assert.equal((await d.socket('GET', `/api/sessions/${full.json.id}`)).json.status, 'failed');
    const said = (await allLines(d, full.json.id)).map((l) => l.text).join('\n');
    assert.match(said, /root|sudo/i, said);
  }
});

test('claude mcp add grove -- grove mcp: the real Claude Code takes grove\'s MCP server and lists it connected, without credentials', async (t) => {
  const bin = claudeBin();
  // `grove` on the PATH, as an install puts it there.
  const groveBin = makeTempDir(t, 'grove-bin-');
  writeFileSync(path.join(groveBin, 'grove'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(DAEMON_ENTRY)} "$@"\n`, { mode: 0o755 });
  const d = await startDaemon(t);
  const userHome = makeTempDir(t, 'grove-claude-home-');
  mkdirSync(path.join(userHome, '.config'), { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${groveBin}:${process.env.PATH}`, HOME: userHome, GROVE_HOME: d.home };
  delete env.ANTHROPIC_API_KEY;
  delete env.CLAUDE_CODE_OAUTH_TOKEN;
  const claude = (...args: string[]) => spawnSync('claude', args, { cwd: userHome, env, encoding: 'utf8', timeout: 120_000 });
  const added = claude('mcp', 'add', 'grove', '--', 'grove', 'mcp');
  assert.equal(added.status, 0, added.stderr);
  assert.match(added.stdout, /Added stdio MCP server grove with command: grove mcp/);
  const list = claude('mcp', 'list');
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^grove: grove mcp - .*Connected$/m, list.stdout);
});

// grove runs the real Claude Code in a new task against a scripted model (test/helpers/
// model-server.ts): the session's end, its worktree, its stdout events and what the CLI sent the model.
// The script may be a function of the worktree, for tools that take absolute paths. `agent`
// `bare` is the built-in's command as a user's agent, without grove's approval server: what
// Claude Code does by itself. `during` runs while the session does (to answer its approvals).
interface ScriptedOptions {
  agent?: 'claude' | 'bare';
  grove?: Record<string, unknown>;
  during?: (d: TestDaemon, sessionId: string, worktree: string) => Promise<void>;
}
async function scripted(t: TestContext, script: Turn[] | ((worktree: string) => Turn[]), body: { mode: string; args?: string[]; sandbox?: boolean }, extraEnv: Record<string, string> = {}, opts: ScriptedOptions = {}) {
  // The server reads its script as requests come: the turns are filled in once the worktree is known.
  const turns: Turn[] = [];
  const m = await startModelServer(t, turns);
  const home = makeTempDir(t, 'grove-claude-home-');
  // As root, Claude Code refuses `bypassPermissions` unless told it runs in a sandbox: a test
  // machine's root is one (docs/agents.md says what a real root user sees).
  const sandbox = process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {};
  const env = { PATH: `${claudeBin()}:${process.env.PATH}`, HOME: home, CLAUDE_CODE_OAUTH_TOKEN: undefined, ...claudeModelEnv(m.url), ...sandbox, ...extraEnv };
  const d = await startDaemon(t, { env, config: { agents: { bare: BUILTIN_AGENTS.claude } } });
  const files = { 'README.md': '# fixture\n', ...(opts.grove ? { '.grove.json': JSON.stringify(opts.grove) } : {}) };
  const project = await addProject(d, makeRepo(t, { files }));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'scripted' } })).json;
  const worktree = path.resolve(project.path, task.worktree_path);
  turns.push(...(typeof script === 'function' ? script(worktree) : script));
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: opts.agent ?? 'claude', prompt: 'do the scripted thing', ...body } });
  assert.equal(r.status, 201, r.text);
  await opts.during?.(d, r.json.id, worktree);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  const lines = await allLines(d, r.json.id);
  const said = lines.map((l) => l.text).join('\n');
  const events = lines.filter((l) => l.stream === 'stdout').map((l) => JSON.parse(l.text));
  const approvals = (await d.socket('GET', `/api/approvals?session_id=${r.json.id}`)).json;
  return { m, d, s, said, result: events.at(-1), worktree, approvals };
}

// A Bash call the model makes. `touch` is one of the file commands Claude Code's acceptEdits
// lets run in the worktree; the same through `sh -c` is a command it must ask about.
const bash = (command: string): Turn => ({ text: 'Running it.', tool_use: { name: 'Bash', input: { command, description: 'Run it' } } });
const touch = (file: string) => bash(`touch ${file}`);
const shTouch = (file: string) => bash(`sh -c "touch ${file}"`);

test('full mode: the real Claude Code runs scripted Bash calls (one edit mode would refuse) in the task\'s worktree, and the session exits with its result', async (t) => {
  // Claude Code's own requests, unconfined: behind the confined session's proxy it makes no HEAD /.
  const run = await scripted(t, [touch('ran.txt'), shTouch('also.txt'), { text: 'Created ran.txt.' }], { mode: 'full', sandbox: false });
  assert.equal(run.s.status, 'exited', run.said);
  assert.equal(run.s.exit_code, 0);
  assert.ok(existsSync(path.join(run.worktree, 'ran.txt')), 'the command ran in the worktree');
  assert.ok(existsSync(path.join(run.worktree, 'also.txt')));
  for (const turn of run.m.turns().slice(1)) assert.deepEqual(toolResults(turn).map((r) => [r.is_error, r.text]), [[false, '(Bash completed with no output)']]);
  assert.equal(run.result.type, 'result');
  assert.deepEqual(run.result.permission_denials, []);
  // All Claude Code asked of the server besides the loop's turns was a HEAD /.
  assert.deepEqual(run.m.requests.filter((r) => r.turn === null).map((r) => `${r.method} ${r.path}`), ['HEAD /']);
  assert.deepEqual(run.m.turns().map((r) => `${r.method} ${r.path}${r.query} ${r.body.stream}`), Array(3).fill('POST /v1/messages?beta=true true'));
  // Field by field: the result gains fields (DESIGN §15's denials) that this test does not own.
  assert.equal(run.s.result.text, 'Created ran.txt.');
  assert.equal(run.s.result.is_error, false);
  assert.equal(run.s.result.output_tokens, run.result.usage.output_tokens);
});

test('edit mode without grove\'s bridge (a user\'s agent): Claude Code runs `touch` in the worktree but itself denies `sh -c …` (the model is told, the result lists it in permission_denials)', async (t) => {
  const run = await scripted(t, [touch('ran.txt'), shTouch('denied.txt'), { text: 'I could not run the second.' }], { mode: 'edit' }, {}, { agent: 'bare' });
  assert.equal(run.s.status, 'exited', run.said);
  assert.equal(run.s.exit_code, 0);
  assert.ok(existsSync(path.join(run.worktree, 'ran.txt')), 'acceptEdits lets a file command run');
  assert.ok(!existsSync(path.join(run.worktree, 'denied.txt')), 'the denied command did not run');
  const [ran, denied] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.equal(ran!.is_error, false, ran!.text);
  assert.deepEqual(denied, { tool_use_id: denied!.tool_use_id, is_error: true, text: 'This command requires approval' });
  assert.ok(!toolNames(run.m.turns()[0]!).includes('AskUserQuestion'), 'no question tool without a permission prompt tool');
  assert.deepEqual(run.result.permission_denials, [{ tool_name: 'Bash', tool_use_id: denied!.tool_use_id, tool_input: { command: 'sh -c "touch denied.txt"', description: 'Run it' } }]);
  // A denial does not make the run an error in Claude Code's eyes: grove has to say it (DESIGN §15).
  assert.equal(run.result.is_error, false);
  assert.equal(run.s.result.text, 'I could not run the second.');
});

test('edit mode: scripted Write and Edit calls really change files in the worktree', async (t) => {
  const run = await scripted(
    t,
    (wt) => [
      { tool_use: { name: 'Write', input: { file_path: path.join(wt, 'notes.md'), content: 'written by the scripted model\n' } } },
      { tool_use: { name: 'Read', input: { file_path: path.join(wt, 'README.md') } } },
      { tool_use: { name: 'Edit', input: { file_path: path.join(wt, 'README.md'), old_string: '# fixture', new_string: '# edited fixture' } } },
      { text: 'Wrote notes.md and edited README.md.' },
    ],
    { mode: 'edit' },
  );
  assert.equal(run.s.status, 'exited', run.said);
  for (const turn of run.m.turns().slice(1)) assert.equal(toolResults(turn)[0]!.is_error, false, toolResults(turn)[0]!.text);
  assert.equal(readFileSync(path.join(run.worktree, 'notes.md'), 'utf8'), 'written by the scripted model\n');
  assert.equal(readFileSync(path.join(run.worktree, 'README.md'), 'utf8'), '# edited fixture\n');
  assert.deepEqual(run.result.permission_denials, []);
  assert.equal(run.s.result.text, 'Wrote notes.md and edited README.md.');
});

// Claude Code's permission prompt tool through MCP: `--mcp-config` names the fixture's server
// (with a per-server `timeout` in ms, if given), `--permission-prompt-tool mcp__permit__permit`
// its tool, which answers from PERMIT_ANSWERS and logs each call (in a folder of the test's: these
// sessions run unconfined, as the tests are of Claude Code's own protocol, not of grove's sandbox).
const PERMIT = path.join(ROOT, 'test', 'fixtures', 'permit-mcp.mjs');
function permitArgs(t: TestContext, answers: unknown[], timeout?: number): { args: string[]; calls: () => any[] } {
  const log = path.join(makeTempDir(t, 'grove-permit-'), 'calls.jsonl');
  writeFileSync(log, '');
  const server = { command: process.execPath, args: [PERMIT], env: { PERMIT_LOG: log, PERMIT_ANSWERS: JSON.stringify(answers) }, ...(timeout ? { timeout } : {}) };
  return {
    args: ['--mcp-config', JSON.stringify({ mcpServers: { permit: server } }), '--permission-prompt-tool', 'mcp__permit__permit'],
    calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).arguments),
  };
}

test('confined (DESIGN §18): the real Claude Code edits and commits in its worktree, reaches its model through the sandbox, and cannot write outside', async (t) => {
  const outside = path.join(makeTempDir(t, 'grove-outside-'), 'planted.txt');
  const commit = 'echo confined > made.txt && git add made.txt && git -c user.name=A -c user.email=a@example.com commit -qm "confined work"';
  const run = await scripted(t, [bash(commit), bash(`touch ${outside}`), { text: 'Committed; the other was refused.' }], { mode: 'full' });
  assert.equal(run.s.status, 'exited', run.said);
  assert.deepEqual(run.s.sandbox, { confined: true });
  const [committed, planted] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.equal(committed!.is_error, false, committed!.text);
  assert.equal(git(run.worktree, 'log', '-1', '--format=%s'), 'confined work', 'the commit is in the repository');
  assert.equal(planted!.is_error, true, planted!.text);
  assert.match(planted!.text, /Read-only file system/);
  assert.ok(!existsSync(outside), 'nothing written outside the worktree');
  assert.equal(run.s.result.text, 'Committed; the other was refused.');
});

test('edit mode with an MCP permission prompt tool: it gets {tool_name, input, tool_use_id}; allow with updatedInput runs the updated call, deny\'s message reaches the model verbatim; AskUserQuestion is offered', async (t) => {
  const deny = 'grove: the person said no to this (test)';
  const permit = permitArgs(t, [
    { behavior: 'allow', updatedInput: { command: 'sh -c "touch updated.txt"', description: 'Run it' } },
    { behavior: 'deny', message: deny },
  ]);
  const run = await scripted(t, [touch('plain.txt'), shTouch('asked.txt'), shTouch('denied.txt'), { text: 'One ran, one was refused.' }], { mode: 'edit', args: permit.args, sandbox: false }, {}, { agent: 'bare' });
  assert.equal(run.s.status, 'exited', run.said);
  const [plain, asked, denied] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  // What acceptEdits allows by itself is not asked about.
  assert.deepEqual(permit.calls(), [
    { tool_name: 'Bash', input: { command: 'sh -c "touch asked.txt"', description: 'Run it' }, tool_use_id: asked!.tool_use_id },
    { tool_name: 'Bash', input: { command: 'sh -c "touch denied.txt"', description: 'Run it' }, tool_use_id: denied!.tool_use_id },
  ]);
  assert.equal(plain!.is_error, false);
  assert.ok(existsSync(path.join(run.worktree, 'plain.txt')));
  assert.equal(asked!.is_error, false, asked!.text);
  assert.ok(existsSync(path.join(run.worktree, 'updated.txt')), 'the allowed call ran with its updated input');
  assert.ok(!existsSync(path.join(run.worktree, 'asked.txt')));
  assert.ok(!existsSync(path.join(run.worktree, 'denied.txt')));
  assert.deepEqual(denied, { tool_use_id: denied!.tool_use_id, is_error: true, text: deny }, 'the deny message reached the model verbatim');
  assert.deepEqual(run.result.permission_denials, [{ tool_name: 'Bash', tool_use_id: denied!.tool_use_id, tool_input: { command: 'sh -c "touch denied.txt"', description: 'Run it' } }]);
  const offered = toolNames(run.m.turns()[0]!);
  assert.ok(offered.includes('AskUserQuestion'), 'a permission prompt tool makes Claude Code offer AskUserQuestion');
  assert.ok(!offered.some((name) => name.startsWith('mcp__permit')), 'the prompt tool itself is not offered to the model');
  assert.equal(run.s.result.text, 'One ran, one was refused.');
});

test('an MCP permission prompt tool that answers allow without updatedInput, or not within the server\'s timeout: the call fails as a tool error, nothing runs, and permission_denials stays empty', async (t) => {
  const permit = permitArgs(t, [{ behavior: 'allow' }, 'hang'], 2000);
  const run = await scripted(t, [shTouch('bare.txt'), shTouch('slow.txt'), { text: 'Neither ran.' }], { mode: 'edit', args: permit.args, sandbox: false }, {}, { agent: 'bare' });
  assert.equal(run.s.status, 'exited', run.said);
  assert.equal(permit.calls().length, 2);
  const [bare, slow] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.equal(bare!.is_error, true);
  assert.match(bare!.text, /^<tool_use_error>Error calling tool \(Bash\): .*updatedInput/s, bare!.text);
  assert.deepEqual(slow, { tool_use_id: slow!.tool_use_id, is_error: true, text: '<tool_use_error>Error calling tool (Bash): MCP server "permit" tool "permit" timed out after 2s</tool_use_error>' });
  assert.ok(!existsSync(path.join(run.worktree, 'bare.txt')));
  assert.ok(!existsSync(path.join(run.worktree, 'slow.txt')));
  assert.deepEqual(run.result.permission_denials, [], 'such failures are not denials in Claude Code\'s result');
});

test('AskUserQuestion goes to the MCP permission prompt tool: allow with updatedInput.answers answers it (free text too), deny\'s message reaches the model', async (t) => {
  const questions = [{ question: 'Which color?', header: 'Color', options: [{ label: 'red', description: 'warm' }, { label: 'blue', description: 'cool' }], multiSelect: false }];
  const ask: Turn = { tool_use: { name: 'AskUserQuestion', input: { questions } } };
  const permit = permitArgs(t, [
    { behavior: 'allow', updatedInput: { questions, answers: { 'Which color?': 'green, actually' } } },
    { behavior: 'deny', message: 'no answer from the person (test)' },
  ]);
  const run = await scripted(t, [ask, ask, { text: 'Green it is.' }], { mode: 'edit', args: permit.args, sandbox: false }, {}, { agent: 'bare' });
  assert.equal(run.s.status, 'exited', run.said);
  const [answered, refused] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.deepEqual(permit.calls(), [
    { tool_name: 'AskUserQuestion', input: { questions }, tool_use_id: answered!.tool_use_id },
    { tool_name: 'AskUserQuestion', input: { questions }, tool_use_id: refused!.tool_use_id },
  ]);
  // Claude Code words the answer itself (its wording changes between releases); the answer given
  // is what must reach the model.
  assert.equal(answered!.is_error, false);
  assert.ok(answered!.text.includes('"Which color?"="green, actually"'), answered!.text);
  assert.deepEqual(refused, { tool_use_id: refused!.tool_use_id, is_error: true, text: 'no answer from the person (test)' });
  assert.deepEqual(run.result.permission_denials, [{ tool_name: 'AskUserQuestion', tool_use_id: refused!.tool_use_id, tool_input: { questions } }]);
});

// `--permission-prompt-tool stdio` with `--input-format stream-json`: Claude Code asks on its
// stdout with a `control_request` and reads the answer from stdin, which must stay open until its
// result. Run directly: grove's sessions write stdout to files and do not speak on stdin.
test('permission prompt tool stdio: can_use_tool control requests on stdout, control_response answers on stdin (allow with updatedInput, deny with a message the model reads verbatim)', async (t) => {
  const m = await startModelServer(t, [shTouch('asked.txt'), shTouch('denied.txt'), { text: 'done.' }]);
  const cwd = makeRepo(t);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${claudeBin()}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-claude-home-'), ...claudeModelEnv(m.url) };
  delete env.CLAUDE_CODE_OAUTH_TOKEN;
  const args = ['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits', '--permission-prompt-tool', 'stdio'];
  const child = spawn('claude', args, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answers = [
    { behavior: 'allow', updatedInput: { command: 'sh -c "touch updated.txt"', description: 'Run it' } },
    { behavior: 'deny', message: 'stdio says no (test)' },
  ];
  const asked: any[] = [];
  let result: any;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line);
    if (event.type === 'control_request') {
      asked.push(event.request);
      send({ type: 'control_response', response: { subtype: 'success', request_id: event.request_id, response: answers[asked.length - 1] } });
    }
    if (event.type === 'result') {
      result = event;
      child.stdin.end();
    }
  });
  send({ type: 'user', message: { role: 'user', content: 'do the scripted thing' }, parent_tool_use_id: null, session_id: '' });
  assert.equal(await exited, 0);

  const [first, second] = m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  const request = (command: string, id: string) => ({
    subtype: 'can_use_tool',
    tool_name: 'Bash',
    display_name: 'Bash',
    input: { command, description: 'Run it' },
    description: 'Run it',
    permission_suggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: command }], behavior: 'allow', destination: 'localSettings' }],
    decision_reason: 'This command requires approval',
    decision_reason_type: 'other',
    tool_use_id: id,
  });
  assert.deepEqual(asked, [request('sh -c "touch asked.txt"', first!.tool_use_id), request('sh -c "touch denied.txt"', second!.tool_use_id)]);
  assert.ok(existsSync(path.join(cwd, 'updated.txt')), 'the allowed call ran with its updated input');
  assert.ok(!existsSync(path.join(cwd, 'asked.txt')) && !existsSync(path.join(cwd, 'denied.txt')));
  assert.equal(first!.is_error, false);
  assert.deepEqual(second, { tool_use_id: second!.tool_use_id, is_error: true, text: 'stdio says no (test)' });
  assert.ok(toolNames(m.turns()[0]!).includes('AskUserQuestion'));
  assert.deepEqual(result.permission_denials, [{ tool_name: 'Bash', tool_use_id: second!.tool_use_id, tool_input: { command: 'sh -c "touch denied.txt"', description: 'Run it' } }]);
});

// A PreToolUse command hook given with `--settings` (test/fixtures/permit-hook.mjs answers from
// PERMIT_ANSWERS); a PermissionRequest hook given beside it logs to the same file if ever run.
test('a PreToolUse hook given with --settings: it gets the call, allow runs it, deny\'s reason reaches the model verbatim; the PermissionRequest hook is never run in -p, and AskUserQuestion is not offered', async (t) => {
  const log = path.join(makeTempDir(t, 'grove-hook-'), 'events.jsonl');
  writeFileSync(log, '');
  const decide = (permissionDecision: string, permissionDecisionReason: string) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason } });
  const hook = [{ matcher: '*', hooks: [{ type: 'command', command: `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'test', 'fixtures', 'permit-hook.mjs'))}` }] }];
  const settings = { hooks: { PreToolUse: hook, PermissionRequest: hook } };
  const answers = [decide('allow', 'the hook allows it'), decide('deny', 'hook says no (test)'), decide('ask', 'the hook asks')];
  const run = await scripted(t, [shTouch('allowed.txt'), shTouch('denied.txt'), shTouch('asked.txt'), { text: 'done.' }], { mode: 'edit', args: ['--settings', JSON.stringify(settings)], sandbox: false }, { PERMIT_LOG: log, PERMIT_ANSWERS: JSON.stringify(answers) }, { agent: 'bare' });
  assert.equal(run.s.status, 'exited', run.said);
  const [allowed, denied, asked] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  const events = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => [e.hook_event_name, e.tool_name, e.tool_input.command, e.tool_use_id, e.permission_mode, e.cwd]), [
    ['PreToolUse', 'Bash', 'sh -c "touch allowed.txt"', allowed!.tool_use_id, 'acceptEdits', run.worktree],
    ['PreToolUse', 'Bash', 'sh -c "touch denied.txt"', denied!.tool_use_id, 'acceptEdits', run.worktree],
    ['PreToolUse', 'Bash', 'sh -c "touch asked.txt"', asked!.tool_use_id, 'acceptEdits', run.worktree],
  ]);
  assert.equal(events[0].session_id, run.s.agent_session_id);
  assert.ok(existsSync(path.join(run.worktree, 'allowed.txt')));
  assert.ok(!existsSync(path.join(run.worktree, 'denied.txt')) && !existsSync(path.join(run.worktree, 'asked.txt')));
  assert.equal(allowed!.is_error, false, allowed!.text);
  assert.deepEqual([denied!.is_error, denied!.text], [true, 'hook says no (test)']);
  // `ask` in -p, with no one to ask: refused, its reason as the message.
  assert.deepEqual([asked!.is_error, asked!.text], [true, 'the hook asks']);
  assert.ok(!toolNames(run.m.turns()[0]!).includes('AskUserQuestion'));
  assert.deepEqual(run.result.permission_denials.map((d: any) => d.tool_use_id), [denied!.tool_use_id, asked!.tool_use_id], 'both refusals are listed');
});

// grove's own bridge (DESIGN §15): the built-in in edit names `grove approval-mcp` as its
// permission prompt tool, so what acceptEdits would refuse becomes a pending approval.
async function pendingOf(d: TestDaemon, sessionId: string): Promise<any> {
  return until(async () => (await d.socket('GET', `/api/approvals?status=pending&session_id=${sessionId}`)).json[0], 'a pending approval', 120_000);
}

test('grove bridge, edit: `sh -c "touch asked.txt"` is a pending approval with the whole command; allowed, it runs and the session exits', async (t) => {
  let seen: any;
  const run = await scripted(t, [shTouch('asked.txt'), { text: 'It ran.' }], { mode: 'edit' }, {}, {
    during: async (d, id, worktree) => {
      seen = await pendingOf(d, id);
      assert.equal((await d.socket('GET', `/api/sessions/${id}`)).json.waiting, 'approval');
      assert.ok(!existsSync(path.join(worktree, 'asked.txt')), 'nothing ran while it waits');
      const r = await d.socket('POST', `/api/approvals/${seen.id}`, { body: { nonce: seen.nonce, decision: 'allow' } });
      assert.equal(r.status, 200, r.text);
    },
  });
  assert.deepEqual([seen.kind, seen.tool, seen.input], ['tool', 'Bash', { command: 'sh -c "touch asked.txt"', description: 'Run it' }]);
  const [asked] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.equal(seen.key, asked!.tool_use_id, "the approval's key is Claude Code's tool-use id");
  assert.equal(run.s.status, 'exited', run.said);
  assert.equal(run.s.exit_code, 0);
  assert.ok(existsSync(path.join(run.worktree, 'asked.txt')), 'the allowed command ran in the worktree');
  assert.equal(asked!.is_error, false, asked!.text);
  assert.deepEqual(run.result.permission_denials, []);
  assert.deepEqual(run.approvals.map((a: any) => a.status), ['allowed']);
  assert.ok(!toolNames(run.m.turns()[0]!).some((name) => name.startsWith('mcp__grove')), 'the prompt tool is not offered to the model');
});

test('grove bridge, edit: denied with a message, the command does not run and the model gets the message verbatim', async (t) => {
  const message = 'not in this task (test)';
  const run = await scripted(t, [shTouch('denied.txt'), { text: 'Refused, fine.' }], { mode: 'edit' }, {}, {
    during: async (d, id) => {
      const a = await pendingOf(d, id);
      const r = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'deny', message } });
      assert.equal(r.status, 200, r.text);
    },
  });
  assert.equal(run.s.status, 'exited', run.said);
  assert.ok(!existsSync(path.join(run.worktree, 'denied.txt')));
  const [denied] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.deepEqual(denied, { tool_use_id: denied!.tool_use_id, is_error: true, text: message }, "the model's next request carries the message");
  assert.deepEqual(run.result.permission_denials, [{ tool_name: 'Bash', tool_use_id: denied!.tool_use_id, tool_input: { command: 'sh -c "touch denied.txt"', description: 'Run it' } }]);
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.reason]), [['denied', message]]);
});

test("grove bridge, edit: an `allow` rule in .grove.json lets the command run with no pending approval", async (t) => {
  const rule = 'Bash(sh -c "touch ruled.txt")';
  const run = await scripted(t, [shTouch('ruled.txt'), { text: 'It ran.' }], { mode: 'edit' }, {}, { grove: { allow: [rule] } });
  assert.equal(run.s.status, 'exited', run.said);
  assert.ok(existsSync(path.join(run.worktree, 'ruled.txt')));
  assert.deepEqual(run.result.permission_denials, []);
  // Asked and allowed at once by the rule: recorded, never pending.
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.tool, a.input.command]), [['allowed', 'Bash', 'sh -c "touch ruled.txt"']]);
  assert.match(run.approvals[0].reason, /touch ruled\.txt/);
  const events = (await run.d.socket('GET', `/api/events?task_id=${run.s.task_id}`)).json.events.map((e: any) => e.type);
  assert.ok(!events.includes('approval.requested'), events.join(' '));
});

test('grove bridge, edit: under `Bash(tee:*)` a line of tee and a read-only command runs with no pending approval, as Claude Code runs it; a part no rule allows and not read-only is still asked (issue 41)', async (t) => {
  const message = 'not that part (test)';
  let asked: any;
  const lines = ['tee ran.txt </dev/null && echo done', 'tee ran2.txt </dev/null && touch other.txt'];
  // The model's first call comes at once: grove has Claude Code connect its prompt server first
  // (a call before it is up would fail as "not found" instead of being asked).
  const run = await scripted(t, [bash(lines[0]!), bash(lines[1]!), { text: 'One ran.' }], { mode: 'edit' }, {}, {
    grove: { allow: ['Bash(tee:*)'] },
    during: async (d, id, worktree) => {
      asked = await pendingOf(d, id);
      assert.ok(existsSync(path.join(worktree, 'ran.txt')), 'the first line ran before the second was asked');
      const r = await d.socket('POST', `/api/approvals/${asked.id}`, { body: { nonce: asked.nonce, decision: 'deny', message } });
      assert.equal(r.status, 200, r.text);
    },
  });
  assert.equal(run.s.status, 'exited', run.said);
  assert.equal(asked.input.command, lines[1]);
  const [first, second] = run.m.turns().slice(1).map((turn) => toolResults(turn)[0]!);
  assert.deepEqual([first!.is_error, first!.text], [false, 'done']);
  assert.deepEqual([second!.is_error, second!.text], [true, message]);
  assert.ok(!existsSync(path.join(run.worktree, 'ran2.txt')) && !existsSync(path.join(run.worktree, 'other.txt')), 'the asked line did not run');
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.input.command, a.reason]), [['allowed', lines[0], 'allowed by the rule Bash(tee:*)'], ['denied', lines[1], message]]);
});

// The bridge's cases below share one scripted model server and one daemon (the CLI is installed
// once, above): each test appends its turns to the one script, in a project of its own, and reads
// the requests from where it began. The restart test runs its own daemon on that server.
const script: Turn[] = [];
const sharedCleanups: Array<() => unknown> = [];
after(async () => {
  for (const fn of sharedCleanups.reverse()) await fn();
});
const fileScope = { after: (fn: () => unknown) => void sharedCleanups.push(fn) };
let shared: Promise<{ m: ModelServer; d: TestDaemon; env: Record<string, string | undefined> }> | null = null;
function bridgeDaemon() {
  return (shared ??= (async () => {
    const m = await startModelServer(fileScope, script);
    const env = { PATH: `${claudeBin()}:${process.env.PATH}`, HOME: makeTempDir(fileScope, 'grove-claude-home-'), CLAUDE_CODE_OAUTH_TOKEN: undefined, ...claudeModelEnv(m.url) };
    return { m, env, d: await startDaemon(fileScope, { env }) };
  })());
}

// A task of its own project (with `grove` as its .grove.json) on `d`.
async function taskOn(t: TestContext, d: TestDaemon, grove?: Record<string, unknown>, project?: any) {
  const files = { 'README.md': '# fixture\n', ...(grove ? { '.grove.json': JSON.stringify(grove) } : {}) };
  const p = project ?? (await addProject(d, makeRepo(t, { files })));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'bridged' } })).json;
  assert.equal(task.status, 'ready', JSON.stringify(task));
  return { project: p, task, worktree: path.resolve(p.path, task.worktree_path) };
}

// A session's process group is killed after the test, whatever became of its daemon: a test
// that fails while Claude Code waits on an approval leaves nothing running.
async function reapAfter(t: TestContext, d: TestDaemon, id: string): Promise<void> {
  const pid = await until(async () => (await d.socket('GET', `/api/sessions/${id}`)).json.pid, "the session's process", 60_000);
  t.after(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
}

// One turn of the built-in claude on the shared model server: `turns` are what the model says,
// `start` starts the session (a new one, or a follow-up) and `during` runs while it does.
async function bridged(t: TestContext, d: TestDaemon, m: ModelServer, turns: Turn[], start: () => Promise<any>, during?: (sessionId: string) => Promise<void>) {
  // A test that failed midway may have left turns unread: they are not this test's.
  script.length = m.turns().length;
  script.push(...turns);
  const from = m.requests.length;
  const r = await start();
  assert.ok(r.status === 201 || r.status === 202, r.text);
  await reapAfter(t, d, r.json.id);
  await during?.(r.json.id);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  const said = (await allLines(d, r.json.id)).map((l) => l.text).join('\n');
  const approvals = (await d.socket('GET', `/api/approvals?session_id=${r.json.id}`)).json;
  const results = m.requests.slice(from).filter((q) => q.turn !== null).slice(1).map((q) => toolResults(q)[0]!);
  return { s, said, approvals, results };
}
const newSession = (d: TestDaemon, taskId: string, body: Record<string, unknown> = {}) => () => d.socket('POST', `/api/tasks/${taskId}/sessions`, { body: { agent: 'claude', prompt: 'do the scripted thing', mode: 'edit', ...body } });
const allow = async (d: TestDaemon, a: any, more: Record<string, unknown> = {}) => {
  const r = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow', ...more } });
  assert.equal(r.status, 200, r.text);
};
// The approval.requested events of session `s`: none for what a rule allowed.
const requested = async (d: TestDaemon, s: any) => (await d.socket('GET', `/api/events?task_id=${s.task_id}`)).json.events.filter((e: any) => e.type === 'approval.requested' && e.session_id === s.id);

test('grove bridge, edit: the daemon restarts while Claude Code waits on an approval; after it the same approval is pending, allowed, the command runs and the session ends 0', async (t) => {
  const { m, env } = await bridgeDaemon();
  const home = makeHome(t);
  const d1 = await startDaemon(t, { home, env });
  const { task, worktree } = await taskOn(t, d1);
  script.length = m.turns().length;
  script.push(shTouch('restarted.txt'), { text: 'It ran.' });
  const r = await newSession(d1, task.id)();
  assert.equal(r.status, 201, r.text);
  await reapAfter(t, d1, r.json.id);
  const asked = await pendingOf(d1, r.json.id);
  await d1.stop();

  const d2 = await startDaemon(t, { home, env });
  const again = (await d2.socket('GET', `/api/approvals/${asked.id}`)).json;
  assert.deepEqual([again.status, again.nonce], ['pending', asked.nonce], 'still pending, its nonce kept');
  assert.equal((await d2.socket('GET', `/api/sessions/${r.json.id}`)).json.waiting, 'approval');
  assert.ok(!existsSync(path.join(worktree, 'restarted.txt')), 'nothing ran while it waits');
  await allow(d2, again);
  await waitSessionEnd(d2, r.json.id);
  const s = (await d2.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'exited', (await allLines(d2, r.json.id)).map((l) => l.text).join('\n'));
  assert.equal(s.exit_code, 0);
  assert.ok(existsSync(path.join(worktree, 'restarted.txt')), 'the allowed command ran');
  const approvals = (await d2.socket('GET', `/api/approvals?session_id=${r.json.id}`)).json;
  assert.deepEqual(approvals.map((a: any) => [a.id, a.status]), [[asked.id, 'allowed']], 'the bridge found the same approval by its key');
  const ran = toolResults(m.turns().at(-1)!)[0]!;
  assert.deepEqual([ran.tool_use_id, ran.is_error], [asked.key, false], ran.text);
  assert.equal(s.result.text, 'It ran.');
});

// Claude Code bounds a call of an MCP tool by the server's `timeout`, else by MCP_TOOL_TIMEOUT
// (here 1 s, in the task's environment): grove's own timeout for its server keeps the wait
// until grove answers.
test('grove bridge, edit: approval_timeout_s 2 expires the approval; the model is told "no decision within 2 s", never a refusal by the person nor a tool timeout (MCP_TOOL_TIMEOUT 1 s), and nothing runs', async (t) => {
  const { d, m } = await bridgeDaemon();
  const { task, worktree } = await taskOn(t, d, { env: { MCP_TOOL_TIMEOUT: '1000' } });
  const run = await bridged(t, d, m, [shTouch('late.txt'), { text: 'No answer came.' }], newSession(d, task.id, { approval_timeout_s: 2 }));
  assert.equal(run.s.status, 'exited', run.said);
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.reason]), [['expired', 'no decision within 2 s']]);
  const [late] = run.results;
  assert.deepEqual([late!.is_error, late!.text], [true, 'no decision within 2 s'], "the model's next request carries grove's wording");
  assert.doesNotMatch(late!.text, /user|declin|denied/i);
  assert.ok(!existsSync(path.join(worktree, 'late.txt')), 'the command did not run');
});

test('grove bridge, edit: allowed with remember "session", the same command asked again in the turn and in a follow-up runs without a pending approval', async (t) => {
  const { d, m } = await bridgeDaemon();
  const { task, worktree } = await taskOn(t, d);
  const command = 'sh -c "touch remembered.txt"';
  const rule = `allowed by the rule Bash(${command})`;
  const run = await bridged(t, d, m, [shTouch('remembered.txt'), shTouch('remembered.txt'), { text: 'Both ran.' }], newSession(d, task.id), async (id) => allow(d, await pendingOf(d, id), { remember: 'session' }));
  assert.equal(run.s.status, 'exited', run.said);
  assert.deepEqual(run.results.map((r) => r.is_error), [false, false], run.results.map((r) => r.text).join('\n'));
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.reason, a.remember]), [['allowed', null, 'session'], ['allowed', rule, null]]);
  assert.equal((await requested(d, run.s)).length, 1, 'the second call was never pending');
  assert.ok(existsSync(path.join(worktree, 'remembered.txt')));

  const follow = await bridged(t, d, m, [shTouch('remembered.txt'), { text: 'Ran again.' }], () => d.socket('POST', `/api/sessions/${run.s.id}/messages`, { body: { prompt: 'once more' } }));
  assert.equal(follow.s.status, 'exited', follow.said);
  assert.equal(follow.s.conversation_id, run.s.id);
  assert.ok(follow.s.command.includes('--resume'), 'it resumed the agent session');
  assert.deepEqual(follow.approvals.map((a: any) => [a.status, a.reason]), [['allowed', rule]]);
  assert.deepEqual(await requested(d, follow.s), []);
  assert.equal(follow.results[0]!.is_error, false, follow.results[0]!.text);
});

test('grove bridge, edit: allowed with remember "project", a new session of another task of that project runs the command without asking', async (t) => {
  const { d, m } = await bridgeDaemon();
  const first = await taskOn(t, d);
  const command = 'sh -c "touch everywhere.txt"';
  const run = await bridged(t, d, m, [shTouch('everywhere.txt'), { text: 'It ran.' }], newSession(d, first.task.id), async (id) => allow(d, await pendingOf(d, id), { remember: 'project' }));
  assert.equal(run.s.status, 'exited', run.said);
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.remember]), [['allowed', 'project']]);

  const second = await taskOn(t, d, undefined, first.project);
  const other = await bridged(t, d, m, [shTouch('everywhere.txt'), { text: 'It ran here too.' }], newSession(d, second.task.id));
  assert.equal(other.s.status, 'exited', other.said);
  assert.deepEqual(other.approvals.map((a: any) => [a.status, a.reason]), [['allowed', `allowed by the rule Bash(${command})`]]);
  assert.deepEqual(await requested(d, other.s), []);
  assert.equal(other.results[0]!.is_error, false, other.results[0]!.text);
  assert.ok(existsSync(path.join(second.worktree, 'everywhere.txt')), 'it ran in the other task\'s worktree');
});

// In `read` (Claude Code's plan mode) Claude Code itself refuses a write and a command that
// changes things ("Cannot write … while in plan mode", "This command requires approval") and
// runs what only reads; with grove's prompt tool those refusals are asked instead, and so is
// ExitPlanMode (the model asking to leave plan mode, with its plan).
test('grove bridge, read (plan mode): a Write, a shell command and ExitPlanMode are asked (the Write allowed is written, the others denied); ls runs without asking', async (t) => {
  const { d, m } = await bridgeDaemon();
  const { task, worktree } = await taskOn(t, d);
  const write: Turn = { tool_use: { name: 'Write', input: { file_path: path.join(worktree, 'plan.md'), content: 'planned\n' } } };
  const exit: Turn = { tool_use: { name: 'ExitPlanMode', input: { plan: 'write plan.md' } } };
  const answers = [{ decision: 'allow' }, { decision: 'deny', message: 'not while planning (test)' }, { decision: 'deny', message: 'keep planning (test)' }];
  const seen: any[] = [];
  const run = await bridged(t, d, m, [write, bash('ls'), shTouch('planned.txt'), exit, { text: 'Done planning.' }], newSession(d, task.id, { mode: 'read' }), async (id) => {
    for (const answer of answers) {
      const a = await until(async () => (await d.socket('GET', `/api/approvals?status=pending&session_id=${id}`)).json.find((x: any) => !seen.some((y) => y.id === x.id)), 'the next approval', 120_000);
      seen.push(a);
      const r = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, ...answer } });
      assert.equal(r.status, 200, r.text);
    }
  });
  assert.ok(run.s.command.includes('plan') && run.s.command.includes('--permission-prompt-tool'), run.s.command.join(' '));
  assert.equal(run.s.status, 'exited', run.said);
  assert.deepEqual(seen.map((a) => [a.kind, a.tool, a.input]), [
    ['tool', 'Write', { file_path: path.join(worktree, 'plan.md'), content: 'planned\n' }],
    ['tool', 'Bash', { command: 'sh -c "touch planned.txt"', description: 'Run it' }],
    ['tool', 'ExitPlanMode', { plan: 'write plan.md' }],
  ], 'ls was not asked about');
  const [wrote, listed, denied, stay] = run.results;
  assert.equal(wrote!.is_error, false, wrote!.text);
  assert.equal(readFileSync(path.join(worktree, 'plan.md'), 'utf8'), 'planned\n');
  assert.equal(listed!.is_error, false, listed!.text);
  assert.match(listed!.text, /README\.md/);
  assert.deepEqual([denied!.is_error, denied!.text], [true, 'not while planning (test)']);
  assert.deepEqual([stay!.is_error, stay!.text], [true, 'keep planning (test)']);
  assert.ok(!existsSync(path.join(worktree, 'planned.txt')));
  assert.deepEqual(run.approvals.map((a: any) => a.status), ['allowed', 'denied', 'denied']);
});

test('grove bridge, edit: AskUserQuestion with options is an approval of kind question; answered with text, the model gets the answer in the tool result', async (t) => {
  const { d, m } = await bridgeDaemon();
  const { task } = await taskOn(t, d);
  const questions = [{ question: 'Which color?', header: 'Color', options: [{ label: 'red', description: 'warm' }, { label: 'blue', description: 'cool' }], multiSelect: false }];
  let q: any;
  const run = await bridged(t, d, m, [{ tool_use: { name: 'AskUserQuestion', input: { questions } } }, { text: 'Blue it is.' }], newSession(d, task.id), async (id) => {
    q = await pendingOf(d, id);
    assert.equal((await d.socket('GET', `/api/sessions/${id}`)).json.waiting, 'approval');
    await allow(d, q, { answer: 'blue' });
  });
  assert.deepEqual([q.kind, q.tool, q.input], ['question', 'AskUserQuestion', { questions }]);
  assert.equal(run.s.status, 'exited', run.said);
  const [answered] = run.results;
  assert.deepEqual(answered, {
    tool_use_id: q.key,
    is_error: false,
    text: 'Your questions have been answered: "Which color?"="blue". You can now continue with these answers in mind.',
  });
  assert.deepEqual(run.approvals.map((a: any) => [a.status, a.answer]), [['allowed', 'blue']]);
  assert.deepEqual(run.s.result.denials, []);
});
