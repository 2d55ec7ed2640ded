import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import { outputReader } from '../../daemon/agents/dialects.ts';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { claudeProjectName } from '../../daemon/agents/transcripts.ts';
import { createPump, TRANSCRIPT_POLL_MS, type Pump } from '../../daemon/sessions/pump.ts';
import { recordTranscriptPlace, transcriptSource, type TranscriptSource } from '../../daemon/sessions/transcript.ts';
import { sessionFiles, type SessionFiles } from '../../daemon/sessions/wrapper.ts';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import type { SessionRecord } from '../../daemon/store/sessions.ts';
import { makeTempDir } from '../helpers/git.ts';
import { addTask, failInserts, memoryLog, openTestStore, until, type TestStore } from '../helpers/store.ts';

const numbered = (from: number, to: number, tag = 'line') => Array.from({ length: to - from + 1 }, (_, i) => `${tag} ${from + i}`);
const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');

// One store for the file: each test has a session of its own.
const shared = await openTestStore(after);

// A session row (no process: the pump only reads files) and its folder, and a way to start pumps on it.
async function setup(t: TestContext) {
  const { log, records } = memoryLog();
  const task = await addTask(t, shared);
  const id = randomUUID();
  await shared.sessions.insert({ id, task_id: task.id, agent: 'fixture', command: ['true'], mode: 'edit', prompt: null, conversation_id: id, parent_id: null });
  const files = sessionFiles(shared.dataDir, id);
  mkdirSync(files.dir, { recursive: true });
  const rounds = createLimiter(1);
  const counts = { progress: 0, end: 0 };
  const pumps: Pump[] = [];
  t.after(() => Promise.all(pumps.map((p) => p.close())));
  // A pump as the daemon starts one: from what the store holds for the session.
  const pump = async (sessions = shared.sessions, transcript: TranscriptSource | null = null): Promise<Pump> => {
    const rec = (await shared.sessions.get(id)) as SessionRecord;
    const p = createPump(rec, {
      files,
      sessions,
      rounds,
      log,
      reader: outputReader({ format: 'claude' }),
      transcript,
      followUp: () => null,
      checkpoint: async () => null,
      onProgress: () => counts.progress++,
      onEnd: () => counts.end++,
    });
    pumps.push(p);
    return p;
  };
  return { ...shared, id, files, records, counts, pump };
}

async function stored(s: TestStore, id: string): Promise<Array<{ seq: number; stream: string; text: string }>> {
  return (await s.sessions.lines(id, 0, 100_000)).map(({ seq, stream, text }) => ({ seq, stream, text }));
}

async function storedTexts(s: TestStore, id: string): Promise<string[]> {
  const lines = await stored(s, id);
  assert.deepEqual(
    lines.map((l) => l.seq),
    lines.map((_, i) => i + 1),
    'seq counts from 1 with no gaps',
  );
  return lines.map((l) => l.text);
}

function sizes(files: SessionFiles) {
  return { stdout: statSync(files.stdout).size, stderr: statSync(files.stderr).size };
}

test('the pump stores what the files get as they grow, and finish() the rest with the exit status the wrapper recorded', async (t) => {
  const s = await setup(t);
  writeFileSync(s.files.stdout, text(numbered(1, 100)));
  writeFileSync(s.files.stderr, 'warn 1\n');
  const p = await s.pump();
  await until(async () => (await stored(s, s.id)).length === 101, 'the first lines');
  // No poke: the folder's watcher notices the file growing.
  appendFileSync(s.files.stdout, text(numbered(101, 5000)) + 'no newline at the end');
  await until(async () => (await stored(s, s.id)).length === 5001, 'the appended lines');
  assert.equal((await s.sessions.get(s.id))!.status, 'starting', 'the end is not guessed from the output');
  assert.ok(s.counts.progress >= 2);

  writeFileSync(s.files.exit, '3\n');
  await p.finish({});
  const rec = (await s.sessions.get(s.id))!;
  assert.equal(rec.status, 'failed');
  assert.equal(rec.exit_code, 3);
  assert.ok(rec.ended_at);
  const texts = await storedTexts(s, s.id);
  assert.deepEqual(texts.filter((l) => l.startsWith('line') || l.startsWith('no')), [...numbered(1, 5000), 'no newline at the end']);
  assert.deepEqual(
    (await stored(s, s.id)).filter((l) => l.stream === 'stderr').map((l) => l.text),
    ['warn 1'],
  );
  assert.deepEqual({ stdout: rec.stdout_offset, stderr: rec.stderr_offset }, sizes(s.files), 'the offsets reach the end of each file');
  assert.equal(rec.next_seq, 5003);
  assert.equal(s.counts.end, 1);
  assert.ok(s.records.some((r) => r.msg === 'session ended' && r.session === s.id && r.lines === 5002 && r.status === 'failed'));
  // Finishing again is the same promise's answer: nothing is stored twice.
  await p.finish({ status: 'killed', exitCode: null });
  assert.equal((await s.sessions.get(s.id))!.status, 'failed');
  assert.equal(s.counts.end, 1);
});

test('a pump started from the stored offsets (a restart) reads on from there: no line lost, none stored twice', async (t) => {
  const s = await setup(t);
  writeFileSync(s.files.stdout, text(numbered(1, 300)) + 'half a ');
  writeFileSync(s.files.stderr, '');
  const first = await s.pump();
  await until(async () => (await stored(s, s.id)).length === 300, 'the first 300 lines');
  const closing = first.close();
  assert.equal(first.close(), closing, 'a second close is the first one');
  await closing;
  // The unfinished line is not stored: the offset stops at its start.
  assert.equal((await s.sessions.get(s.id))!.stdout_offset, Buffer.byteLength(text(numbered(1, 300))));
  // Written while no daemon follows the session.
  appendFileSync(s.files.stdout, 'line\n' + text(numbered(301, 400)));
  appendFileSync(s.files.stderr, 'err\n');
  await first.finish({}); // after close(): left to the next daemon
  assert.equal((await s.sessions.get(s.id))!.status, 'starting');

  const second = await s.pump();
  await until(async () => (await stored(s, s.id)).length === 402, 'the lines written meanwhile');
  await second.finish({}); // no exit file: the wrapper recorded nothing
  const rec = (await s.sessions.get(s.id))!;
  assert.equal(rec.status, 'lost');
  assert.equal(rec.exit_code, null);
  const lines = await stored(s, s.id);
  assert.deepEqual(await storedTexts(s, s.id), [...numbered(1, 300), 'half a line', ...numbered(301, 400), 'err']);
  assert.deepEqual(
    lines.filter((l) => l.stream === 'stderr').map((l) => l.seq),
    [402],
  );
});

test('after a failed write (the disk full) the pump retries from the stored offsets, and the end waits until every line is stored', async (t) => {
  const s = await setup(t);
  writeFileSync(s.files.stdout, text(numbered(1, 50)));
  const p = await s.pump();
  await until(async () => (await stored(s, s.id)).length === 50, 'the first lines');

  const giveRoom = await failInserts(t, s.store, 'session_lines');
  appendFileSync(s.files.stdout, text(numbered(51, 3000)));
  writeFileSync(s.files.stderr, 'oops\n');
  await until(() => s.records.some((r) => r.msg === 'storing session output failed; will retry' && r.session === s.id), 'a failed write');
  // The end comes while there is still no room: it is not recorded before the lines are.
  writeFileSync(s.files.exit, '0\n');
  const ending = p.finish({});
  await until(() => s.records.some((r) => r.msg === 'storing the end of session output failed; will retry' && r.session === s.id), 'a failed end');
  assert.equal((await s.sessions.get(s.id))!.status, 'starting');
  assert.equal((await stored(s, s.id)).length, 50, 'nothing half-stored');

  await giveRoom();
  await ending;
  const rec = (await s.sessions.get(s.id))!;
  assert.equal(rec.status, 'exited');
  assert.equal(rec.exit_code, 0);
  assert.deepEqual(await storedTexts(s, s.id), [...numbered(1, 3000), 'oops']);
  assert.deepEqual({ stdout: rec.stdout_offset, stderr: rec.stderr_offset }, sizes(s.files));
});

test('a kill ends the session as given, after storing what the files hold', async (t) => {
  const s = await setup(t);
  writeFileSync(s.files.stdout, 'started\nworking');
  writeFileSync(s.files.exit, '0\n'); // not consulted: the kill says how it ended
  const p = await s.pump();
  await p.finish({ status: 'killed', exitCode: null });
  const rec = (await s.sessions.get(s.id))!;
  assert.equal(rec.status, 'killed');
  assert.equal(rec.exit_code, null);
  assert.deepEqual(await storedTexts(s, s.id), ['started', 'working']);
  assert.equal(s.counts.end, 1);
});

test('a write whose answer was lost after it committed (PostgreSQL gone at the COMMIT) is not stored again: the pump reads the stored offsets first', async (t) => {
  const s = await setup(t);
  writeFileSync(s.files.stdout, text(numbered(1, 20)));
  writeFileSync(s.files.stderr, '');
  // The store itself, with one write that commits and then reports the connection lost.
  let lose = 0;
  const sessions = {
    ...s.sessions,
    appendLines: async (...args: Parameters<typeof s.sessions.appendLines>) => {
      await s.sessions.appendLines(...args);
      if (lose > 0 && lose--) throw new Error('Connection terminated unexpectedly');
    },
  };
  const p = await s.pump(sessions);
  await until(async () => (await stored(s, s.id)).length === 20, 'the first lines');
  lose = 1;
  appendFileSync(s.files.stdout, text(numbered(21, 50)));
  await until(() => s.records.some((r) => r.msg === 'storing session output failed; will retry' && r.session === s.id), 'a lost answer');
  appendFileSync(s.files.stdout, text(numbered(51, 60)));
  writeFileSync(s.files.exit, '0\n');
  await p.finish({});
  const rec = (await s.sessions.get(s.id))!;
  assert.equal(rec.status, 'exited');
  assert.deepEqual(await storedTexts(s, s.id), numbered(1, 60), 'every line once');
  assert.deepEqual({ stdout: rec.stdout_offset, stderr: rec.stderr_offset }, sizes(s.files));
});

test("a terminal session's transcript is read while its screen is quiet: an answer written after the last draw becomes the result", async (t) => {
  const s = await setup(t);
  writeFileSync(s.files.stdout, 'the screen, drawn\n');
  writeFileSync(s.files.stderr, '');
  // Real lines of Claude Code's interface (test/fixtures/transcripts), its first turn.
  const lines = readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'transcripts', 'claude-tui.jsonl'), 'utf8').split('\n').filter(Boolean);
  const firstTurn = lines.slice(0, lines.findIndex((l) => l.includes('"subtype":"turn_duration"')) + 1);
  const id = JSON.parse(lines[0]!).sessionId;
  const config = makeTempDir(t);
  const cwd = makeTempDir(t);
  const file = path.join(config, 'projects', claudeProjectName(realpathSync(cwd)), `${id}.jsonl`);
  const claude = BUILTIN_AGENTS.claude!;
  await recordTranscriptPlace(s.files.transcript, claude, { cwd, env: { CLAUDE_CONFIG_DIR: config }, agentSessionId: id, startedAt: new Date().toISOString() });
  await s.pump(shared.sessions, transcriptSource(s.files.transcript, claude));
  await until(async () => (await stored(s, s.id)).length === 1, 'the screen line');
  // The transcript appears after the last output: nothing in the session's folder changes.
  const since = Date.now();
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(file, firstTurn.map((l) => `${l}\n`).join(''));
  await until(async () => (await s.sessions.get(s.id))!.agent_result?.text === 'Done: a.txt says hi.', 'the answer as the result', 5 * TRANSCRIPT_POLL_MS);
  assert.ok(Date.now() - since < 3 * TRANSCRIPT_POLL_MS, `read within ${Date.now() - since} ms`);
  assert.deepEqual(await storedTexts(s, s.id), ['the screen, drawn'], 'no line comes of it');
});
