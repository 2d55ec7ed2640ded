// A terminal session's transcript (DESIGN §21), as its pump reads it: the place recorded before
// the agent runs, lines read on from the size the file had then, an offset that moves only once
// what was read is stored. Real Claude Code TUI lines (test/fixtures/transcripts).
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import type { Reading } from '../../daemon/agents/dialects.ts';
import { claudeProjectName } from '../../daemon/agents/transcripts.ts';
import { recordTranscriptPlace, transcriptSource } from '../../daemon/sessions/transcript.ts';
import { makeTempDir } from '../helpers/git.ts';

const claude = BUILTIN_AGENTS.claude!;
const START: Reading = { agent_session_id: null, result: null, limit_resets_at: null };
const ID = '60a9c57c-50df-4105-9e45-776d26867797';
const LINES = readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'transcripts', 'claude-tui.jsonl'), 'utf8').split('\n').filter(Boolean);
const FIRST_TURN = LINES.findIndex((l) => l.includes('"subtype":"turn_duration"')) + 1;

function place(t: test.TestContext) {
  const config = makeTempDir(t);
  const cwd = makeTempDir(t);
  const record = path.join(makeTempDir(t), 'session', 'transcript.json');
  const file = path.join(config, 'projects', claudeProjectName(realpathSync(cwd)), `${ID}.jsonl`);
  const write = (lines: string[]) => {
    mkdirSync(path.dirname(file), { recursive: true });
    appendFileSync(file, lines.map((l) => l + '\n').join(''));
  };
  const at = { cwd, env: { CLAUDE_CONFIG_DIR: config, SECRET: 'not kept' }, agentSessionId: ID, startedAt: new Date().toISOString() };
  return { record, write, at };
}

test('read on as the file grows; what was read is read again until it is stored', async (t) => {
  const { record, write, at } = place(t);
  await recordTranscriptPlace(record, claude, at);
  assert.equal(JSON.parse(readFileSync(record, 'utf8')).env.SECRET, undefined, 'only where transcripts are is kept');
  const source = transcriptSource(record, claude)!;
  assert.equal((await source.peek(START)).reading, START, 'no file yet: nothing changes');
  write(LINES.slice(0, FIRST_TURN));
  const one = await source.peek(START);
  assert.equal(one.reading.agent_session_id, ID);
  assert.equal(one.reading.result?.text, 'Done: a.txt says hi.');
  // Not stored (no advance): the same lines again.
  assert.deepEqual((await source.peek(START)).reading, one.reading);
  one.advance();
  assert.equal((await source.peek(one.reading)).reading, one.reading, 'nothing new');
  write(LINES.slice(FIRST_TURN));
  const two = await source.peek(one.reading);
  assert.equal(two.reading.result?.text, 'Second answer.');
  assert.deepEqual([two.reading.result?.input_tokens, two.reading.result?.output_tokens], [30, 67]);
});

test('a resumed conversation reads only what was appended after its start', async (t) => {
  const { record, write, at } = place(t);
  write(LINES.slice(0, FIRST_TURN));
  await recordTranscriptPlace(record, claude, at);
  const source = transcriptSource(record, claude)!;
  assert.equal((await source.peek(START)).reading, START);
  write(LINES.slice(FIRST_TURN));
  const read = await source.peek(START);
  assert.equal(read.reading.result?.text, 'Second answer.');
});

test('an agent grove reads no transcript of records nothing and has no source', async (t) => {
  const { record, at } = place(t);
  await recordTranscriptPlace(record, { command: ['my-agent'] }, at);
  assert.equal(transcriptSource(record, { command: ['my-agent'] }), null);
  assert.equal(transcriptSource(record, claude), null, 'nothing was recorded');
});
