// `npm run test:agents`: the built-in `qwen` agent against the real Qwen Code CLI, installed from
// npm into a temporary folder (never a dependency of grove). Without credentials it ends at once
// with an error result. With an OpenAI key and a model endpoint that refuses connections it takes
// the session id grove pins, offers the tools of the session's mode, and ends with a "success"
// result saying "[API Error: …]", which grove reads as an error; a follow-up runs `--resume <id>`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestDaemon } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';
import { closedPort, daemonWithTask, installCli } from '../helpers/real-agents.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';

const NO_KEY = { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, DASHSCOPE_API_KEY: undefined, GEMINI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined };

test('the built-in qwen agent: the prompt attached as text, the pinned session id, the tools of each mode, an API error as an error result, a follow-up with --resume', async (t) => {
  const bin = installCli(t, '@qwen-code/qwen-code');
  const base = { PATH: `${bin}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-qwen-home-'), ...NO_KEY };
  const stdout = async (d: TestDaemon, id: string) =>
    (await allLines(d, id)).filter((l) => l.stream === 'stdout').map((l) => JSON.parse(l.text));

  // No credentials: one error result, exit 1.
  const bare = await daemonWithTask(t, base);
  assert.equal((await bare.d.socket('GET', '/api/agents')).json.find((a: any) => a.name === 'qwen').available, true);
  const b = await bare.d.socket('POST', `/api/tasks/${bare.task.id}/sessions`, { body: { agent: 'qwen', prompt: '- fix the failing test' } });
  assert.equal(b.status, 201, b.text);
  await waitSessionEnd(bare.d, b.json.id);
  const refused = (await bare.d.socket('GET', `/api/sessions/${b.json.id}`)).json;
  assert.equal(refused.exit_code, 1);
  assert.equal(refused.agent_session_id, b.json.agent_session_id);
  assert.equal(refused.result.is_error, true);
  assert.match(refused.result.text, /No auth type is selected/);

  // A key no server will see, and a model endpoint that refuses.
  const env = { ...base, OPENAI_API_KEY: 'grove-test-no-such-key', OPENAI_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, OPENAI_MODEL: 'qwen3-coder-plus' };
  const { d, task } = await daemonWithTask(t, env);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'qwen', prompt: '- fix the failing test' } });
  assert.equal(r.status, 201, r.text);
  const id = r.json.agent_session_id;
  assert.deepEqual(r.json.command, ['qwen', '--output-format', 'stream-json', '--session-id', id, '--approval-mode', 'auto-edit', '--prompt=- fix the failing test']);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  const [init] = await stdout(d, r.json.id);
  assert.equal(init.subtype, 'init');
  assert.equal(init.session_id, id, 'Qwen Code took the pinned session id');
  assert.equal(init.permission_mode, 'auto-edit');
  assert.ok(init.tools.includes('write_file') && !init.tools.includes('run_shell_command'), `edit: writes, no shell: ${init.tools}`);
  assert.equal(s.exit_code, 0, 'Qwen Code exits 0 after a failed model call');
  assert.deepEqual([s.result.is_error, s.result.text], [true, '[API Error: Connection error. (cause: fetch failed)]']);

  const f = await d.socket('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: '--version', mode: 'read' } });
  assert.equal(f.status, 201, f.text);
  assert.deepEqual(f.json.command, ['qwen', '--output-format', 'stream-json', '--resume', id, '--approval-mode', 'default', '--prompt=--version']);
  await waitSessionEnd(d, f.json.id);
  const again = await stdout(d, f.json.id);
  assert.equal(again[0].session_id, id, 'the same session continued');
  assert.equal(again[0].permission_mode, 'default');
  assert.ok(!again[0].tools.some((tool: string) => ['write_file', 'edit', 'run_shell_command'].includes(tool)), `read: no write or shell tool: ${again[0].tools}`);
  assert.equal(again.at(-1).type, 'result', 'the prompt --version went to the model, it did not print a version');
});
