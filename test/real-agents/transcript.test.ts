// `npm run test:agents`: the transcripts the real CLIs write (DESIGN §21), read as a terminal
// session will read them, against what grove reads from the same run's stdout. Claude Code and
// Codex run headless through grove against the scripted model servers (one tool call, then the
// answer); transcriptPath must find the file each wrote (Claude Code's by the pinned session id,
// Codex's by the worktree and the start), and transcriptReader must read from it the session id,
// the result's text and tokens that the stream-json and `exec --json` dialects read.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import type { Reading } from '../../daemon/agents/dialects.ts';
import { readTranscript, transcriptPath, transcriptReader } from '../../daemon/agents/transcripts.ts';
import { claudeModelEnv, startModelServer } from '../helpers/model-server.ts';
import { codexConfig, startResponsesServer } from '../helpers/openai-responses-server.ts';
import { claudePostinstall, cliEnv, daemonWithTask, installCliForFile, runSession } from '../helpers/real-agents.ts';

// The versions test/real-agents/claude.test.ts and codex.test.ts are read against.
const claudeBin = installCliForFile('@anthropic-ai/claude-code@2.1.197', claudePostinstall);
const codexBin = installCliForFile('@openai/codex@0.171.0');

const START: Reading = { agent_session_id: null, result: null, limit_resets_at: null };

// The transcript at `file`, read whole through `def`'s reader as a daemon follows it: in pieces.
async function readAll(def: (typeof BUILTIN_AGENTS)[string], file: string): Promise<Reading> {
  const read = transcriptReader(def)!;
  let r = START;
  for (let offset = 0; ; ) {
    const next = await readTranscript(file, offset, 512);
    if (next.lines.length === 0) return r;
    r = read(r, next.lines);
    offset = next.offset;
  }
}

// What a session's stored result says, field by field (it may carry more: `blocked`).
const said = (r: { text: unknown; is_error: unknown; input_tokens: unknown; output_tokens: unknown }) => [r.text, r.is_error, r.input_tokens, r.output_tokens];

test('claude: the session JSONL Claude Code writes under ~/.claude reads as its stream-json does: the pinned session id, the answer, the tokens', async (t) => {
  const m = await startModelServer(t, [{ text: 'Running it.', tool_use: { name: 'Bash', input: { command: 'touch ran.txt', description: 'Run it' } } }, { text: 'Created ran.txt.' }]);
  // As root, Claude Code refuses `bypassPermissions` unless told it runs in a sandbox.
  const env = cliEnv(t, claudeBin(), { CLAUDE_CODE_OAUTH_TOKEN: undefined, CLAUDE_CONFIG_DIR: undefined, ...claudeModelEnv(m.url), ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}) });
  const { d, task, worktree } = await daemonWithTask(t, env);
  const { s, said: output } = await runSession(d, task, { agent: 'claude', prompt: 'do the scripted thing', mode: 'full', sandbox: false });
  assert.equal(s.status, 'exited', output);
  assert.equal(s.result.text, 'Created ran.txt.');

  const file = await transcriptPath(BUILTIN_AGENTS.claude!, { cwd: worktree, env, agentSessionId: s.agent_session_id, startedAt: s.created_at });
  assert.ok(file !== null && file.startsWith(path.join(env.HOME!, '.claude', 'projects') + path.sep), String(file));
  assert.equal(path.basename(file), `${s.agent_session_id}.jsonl`);
  const r = await readAll(BUILTIN_AGENTS.claude!, file);
  assert.equal(r.agent_session_id, s.agent_session_id);
  assert.deepEqual(said(r.result!), said(s.result));
  assert.equal(r.result!.cost_usd, null, 'the transcript records no cost');
});

test('codex: the rollout Codex writes under ~/.codex is found by the worktree and the start, and reads as `exec --json` does', async (t) => {
  const m = await startResponsesServer(t, [{ call: { name: 'exec_command', arguments: { cmd: 'touch ran.txt' } }, text: 'Running it.' }, { text: 'Created ran.txt.' }]);
  const env = cliEnv(t, codexBin(), { OPENAI_API_KEY: undefined, CODEX_API_KEY: undefined, CODEX_HOME: undefined });
  mkdirSync(path.join(env.HOME!, '.codex'));
  writeFileSync(path.join(env.HOME!, '.codex', 'config.toml'), codexConfig(m.url));
  const { d, task, worktree } = await daemonWithTask(t, env);
  const { s, said: output } = await runSession(d, task, { agent: 'codex', prompt: 'do the scripted thing', mode: 'full', sandbox: false });
  assert.equal(s.status, 'exited', output);
  assert.equal(s.result.text, 'Created ran.txt.');

  // A terminal session does not know its thread id before it reads it from the rollout.
  const place = { cwd: worktree, env, agentSessionId: null, startedAt: s.created_at };
  const file = await transcriptPath(BUILTIN_AGENTS.codex!, place);
  assert.ok(file !== null && file.endsWith(`-${s.agent_session_id}.jsonl`), String(file));
  assert.equal(await transcriptPath(BUILTIN_AGENTS.codex!, { ...place, agentSessionId: s.agent_session_id }), file);
  const r = await readAll(BUILTIN_AGENTS.codex!, file);
  assert.equal(r.agent_session_id, s.agent_session_id);
  assert.deepEqual(said(r.result!), said(s.result));
});
