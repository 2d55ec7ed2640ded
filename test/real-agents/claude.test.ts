// `npm run test:agents`: the built-in `claude` agent against the real Claude Code CLI,
// installed from npm into a temporary folder (never a dependency of grove). Without
// credentials it prints a few stream-json lines and exits 1; grove must capture all of them,
// with the session id it pinned, and a follow-up must run `claude … --resume <that id>`.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { addProject, DAEMON_ENTRY, startDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';

// The CLI, installed once for this file's tests (before the first) into a folder removed after
// the last.
const prefix = makeTempDir({ after }, 'grove-claude-');
let installed = '';
before(() => {
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, '@anthropic-ai/claude-code'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
  // npm may hold back install scripts; the package's own postinstall puts its native binary in place.
  const pkg = path.join(prefix, 'node_modules', '@anthropic-ai', 'claude-code');
  execFileSync(process.execPath, ['install.cjs'], { cwd: pkg, stdio: ['ignore', 'ignore', 'inherit'] });
  installed = path.join(prefix, 'node_modules', '.bin');
});
const claudeBin = () => installed;

test('the built-in claude agent runs the real CLI; without credentials it fails with exit 1, every line captured; a follow-up resumes its session id', async (t) => {
  const bin = claudeBin();

  // No credentials anywhere: a home of its own and no API key.
  const userHome = makeTempDir(t, 'grove-claude-home-');
  mkdirSync(path.join(userHome, '.config'), { recursive: true });
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: userHome, ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: undefined };
  const d = await startDaemon(t, { env });
  const agents = (await d.socket('GET', '/api/agents')).json;
  assert.equal(agents.find((a: any) => a.name === 'claude').available, true);

  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'claude' } })).json;
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'claude', prompt: '- say hello' } });
  assert.equal(r.status, 201, r.text);
  const id = r.json.agent_session_id;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.deepEqual(r.json.command, ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--session-id', id, '--permission-mode', 'acceptEdits', '--', '- say hello']);
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
  assert.deepEqual(f.json.command, ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--resume', id, '--permission-mode', 'acceptEdits', '--', '- and now?']);
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
