import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { nextClockTime, outputReader, type Reading } from '../../daemon/agents/dialects.ts';
import { claudeProjectName, readTranscript, transcriptKind, transcriptPath, transcriptReader } from '../../daemon/agents/transcripts.ts';
import { makeTempDir } from '../helpers/git.ts';

// Transcripts written by the real CLIs (test/fixtures/transcripts/, long strings cut, paths under
// /tmp/grove-fixture), each beside what the same run printed on stdout (`.stdout.jsonl`), driven
// by the scripted model servers (test/helpers/model-server.ts, openai-responses-server.ts): Claude
// Code 2.1.197 (`-p` then `-p --resume`, an API error, a 429, and its interactive TUI under a
// pseudo-terminal, two prompts) and Codex 0.171.0 (`exec` then `exec resume`, a usage limit, its
// TUI). A `-1`/`-2` pair is one file cut where the resumed run began appending to it.
const START: Reading = { agent_session_id: null, result: null, limit_resets_at: null };
const AT = '2026-11-28T21:00:00.000Z';
const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'transcripts');
const lines = (name: string) => readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8').split('\n').filter(Boolean);
const claude = BUILTIN_AGENTS.claude!;
const codex = BUILTIN_AGENTS.codex!;
const fromTranscript = (def: typeof claude, name: string) => transcriptReader(def)!(START, lines(name));
const fromStdout = (def: typeof claude, name: string, at = AT) => outputReader(def)!(START, lines(`${name}.stdout`), at);
const result = (text: string | null, is_error: boolean | null, input_tokens: number | null, output_tokens: number | null) => ({ text, is_error, cost_usd: null, input_tokens, output_tokens, denials: [] });

test('transcriptKind: Claude Code and Codex by the program their commands run, a user agent running them too; none for the others', () => {
  assert.equal(transcriptKind(claude), 'claude');
  assert.equal(transcriptKind(codex), 'codex');
  assert.equal(transcriptKind({ command: ['/opt/bin/claude', '-p'], interactive: ['/opt/bin/claude', '--resume', '{session}'] }), 'claude');
  for (const name of ['amp', 'cursor', 'gemini', 'opencode', 'aider']) assert.equal(transcriptKind(BUILTIN_AGENTS[name]!), null, name);
  assert.equal(transcriptReader(BUILTIN_AGENTS.amp!), null, 'Amp speaks Claude Code\'s stream-json but writes no such transcript');
});

test('claude -p (recorded): the transcript reads as its stream-json does, but for the cost it does not record; a resumed run appends to the same file', () => {
  assert.deepEqual(fromTranscript(claude, 'claude-print-1'), {
    agent_session_id: '1056852f-d40f-4d10-9443-6ad47cfba71a',
    // One message per model response, each content block on a line of its own with the whole
    // message's usage: 10 + 10 in, 44 + 12 out, as the result line of stdout counts them.
    result: result('Done: a.txt says hi.', false, 20, 56),
    limit_resets_at: null,
  });
  const stdout = fromStdout(claude, 'claude-print-1');
  assert.equal(stdout.result!.cost_usd, 0.0015);
  assert.deepEqual(fromTranscript(claude, 'claude-print-1'), { ...stdout, result: { ...stdout.result!, cost_usd: null } });
  // `--resume`: read from where the file stood, only that run's turn.
  const resumed = fromStdout(claude, 'claude-print-2');
  assert.deepEqual(fromTranscript(claude, 'claude-print-2'), { ...resumed, result: { ...resumed.result!, cost_usd: null } });
  assert.deepEqual(fromTranscript(claude, 'claude-print-2').result, result('It still says hi.', false, 10, 11));
});

test('claude (recorded): one reader fed a line at a time reads what it reads at once; the text is the answer, not what came before a tool call', () => {
  const read = transcriptReader(claude)!;
  let r = START;
  const seen: Array<string | null> = [];
  for (const line of lines('claude-print-1')) {
    r = read(r, [line]);
    seen.push(r.result?.text ?? null);
  }
  assert.deepEqual(r, fromTranscript(claude, 'claude-print-1'));
  assert.ok(!seen.includes('I will write a file.'), 'the text said before its Bash call is not a result');
  // Lines that are not JSON, or not of a turn, change nothing: the same object comes back.
  const same = transcriptReader(claude)!(r, ['', 'not json', '{"type":"last-prompt","lastPrompt":"x"}', '{"type":"system","subtype":"turn_duration"}']);
  assert.equal(same, r);
});

test('claude (recorded): an API error and a 429 are errors with Claude Code\'s text, as on stdout; the older "usage limit reached|<epoch>" says when the limit resets', () => {
  for (const name of ['claude-error', 'claude-rate-limit']) {
    const stdout = fromStdout(claude, name);
    assert.deepEqual(fromTranscript(claude, name), { ...stdout, result: { ...stdout.result!, cost_usd: null } }, name);
  }
  assert.deepEqual(fromTranscript(claude, 'claude-error').result, result('API Error: 400 the script has 0 turns; request 1 of the loop has none', true, 0, 0));
  assert.deepEqual(fromTranscript(claude, 'claude-rate-limit').result, result('API Error: Request rejected (429) · rate limited', true, 0, 0));
  assert.equal(fromTranscript(claude, 'claude-rate-limit').limit_resets_at, null, 'an API key\'s 429 names no reset');
  const limited = lines('claude-rate-limit').map((l) => l.replace('API Error: Request rejected (429) · rate limited', 'Claude AI usage limit reached|1795000000'));
  assert.equal(transcriptReader(claude)!(START, limited).limit_resets_at, new Date(1795000000 * 1000).toISOString());
});

test('claude TUI (recorded): each turn\'s answer in turn, the usage of both; a subagent\'s lines are its own', () => {
  const all = lines('claude-tui');
  const firstTurn = all.findIndex((l) => l.includes('"subtype":"turn_duration"'));
  const read = transcriptReader(claude)!;
  const one = read(START, all.slice(0, firstTurn + 1));
  assert.deepEqual(one, { agent_session_id: '60a9c57c-50df-4105-9e45-776d26867797', result: result('Done: a.txt says hi.', false, 20, 56), limit_resets_at: null });
  assert.deepEqual(read(one, all.slice(firstTurn + 1)).result, result('Second answer.', false, 30, 67));
  const side = all.find((l) => l.includes('"Second answer."'))!.replace('"isSidechain":false', '"isSidechain":true').replace('Second answer.', 'a subagent');
  assert.deepEqual(transcriptReader(claude)!(one, [side]), one);
});

test('codex exec (recorded): the rollout reads as `exec --json` does; a resumed thread appends to its file, with this session\'s tokens only', () => {
  assert.deepEqual(fromTranscript(codex, 'codex-exec-1'), {
    agent_session_id: '01a223f5-1c14-7380-87d5-5a343fc5ecd5',
    result: result('Done: a.txt says hi.', false, 20, 126),
    limit_resets_at: null,
  });
  assert.deepEqual(fromTranscript(codex, 'codex-exec-1'), fromStdout(codex, 'codex-exec-1'));
  // The appended part has no session_meta: the thread id comes from its other lines.
  const resumed = fromTranscript(codex, 'codex-exec-2');
  assert.deepEqual(resumed, { agent_session_id: '01a223f5-1c14-7380-87d5-5a343fc5ecd5', result: result('It still says hi.', false, 10, 41), limit_resets_at: null });
  // `exec resume --json` counts the whole thread's tokens in its turn.completed (10 + 10 + 10 in).
  assert.deepEqual([fromStdout(codex, 'codex-exec-2').result!.input_tokens, fromStdout(codex, 'codex-exec-2').result!.output_tokens], [30, 167]);
});

test('codex (recorded): a usage limit fails the turn with Codex\'s message and the clock time it names, as on stdout', () => {
  const r = fromTranscript(codex, 'codex-limit');
  const message = 'You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:57 PM.';
  // The line's own time is the one the clock time is read after.
  const at = JSON.parse(lines('codex-limit').find((l) => l.includes('"task_complete"'))!).timestamp;
  assert.deepEqual(r, { agent_session_id: '01a223f3-264d-7ab1-907d-d8c4c5cf15dd', result: result(message, true, null, null), limit_resets_at: nextClockTime('try again at 9:57 PM', at) });
  assert.deepEqual(r, fromStdout(codex, 'codex-limit', at));
});

test('codex TUI (recorded): the turn\'s last agent message and its tokens; an interrupted turn is an error', () => {
  const r = fromTranscript(codex, 'codex-tui');
  assert.deepEqual(r, { agent_session_id: '01a223f3-e280-7051-9913-6c8f1eb543e1', result: result('Second answer.', false, 20, 125), limit_resets_at: null });
  const aborted = transcriptReader(codex)!(r, [JSON.stringify({ timestamp: AT, type: 'event_msg', payload: { type: 'turn_aborted', reason: 'interrupted' } })]);
  assert.equal(aborted.result!.is_error, true);
});

test('transcriptPath, claude: the pinned session\'s file under CLAUDE_CONFIG_DIR or ~/.claude, in the folder named after the real working directory', async (t) => {
  const dir = makeTempDir(t, 'grove-transcripts-');
  const cwd = path.join(dir, 'my.work_tree');
  mkdirSync(cwd);
  symlinkSync(cwd, path.join(dir, 'link'));
  const config = path.join(dir, 'config');
  const id = '1056852f-d40f-4d10-9443-6ad47cfba71a';
  const place = { cwd: path.join(dir, 'link'), env: { CLAUDE_CONFIG_DIR: config, HOME: '/nowhere' }, agentSessionId: id, startedAt: AT };
  // Every character but letters and digits is a `-` (as the real CLI named the fixtures' folder).
  const name = `${dir.replace(/[^a-zA-Z0-9]/g, '-')}-my-work-tree`;
  assert.equal(await transcriptPath(claude, place), path.join(config, 'projects', name, `${id}.jsonl`));
  assert.equal(await transcriptPath(claude, { ...place, env: { HOME: dir } }), path.join(dir, '.claude', 'projects', name, `${id}.jsonl`));
  assert.equal(await transcriptPath(claude, { ...place, agentSessionId: null }), null, 'without its session id there is no telling which');
  assert.equal(await transcriptPath(BUILTIN_AGENTS.amp!, place), null);
  // Over 200 characters, the name is cut and a hash of the path added: as Claude Code 2.1.197 named it.
  const long = `/tmp/grove-fixture/${'a-very-long-folder-name-that-goes-on.and_on'.repeat(5)}/wt`;
  assert.equal(claudeProjectName(long), `-tmp-grove-fixture-${'a-very-long-folder-name-that-goes-on-and-on'.repeat(4)}a-very-lo-hx8ey1`);
});

test('transcriptPath, codex: the rollout of the thread when known, on any day; else the first created since the start in the working directory', async (t) => {
  const home = makeTempDir(t, 'grove-codex-home-');
  const cwd = makeTempDir(t, 'grove-codex-wt-');
  const meta = JSON.parse(lines('codex-exec-1')[0]!);
  const rollout = (day: string, id: string, at: string, where: string) => {
    const folder = path.join(home, 'sessions', day);
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, `rollout-${at.slice(0, 19).replaceAll(':', '-')}-${id}.jsonl`);
    writeFileSync(file, `${JSON.stringify({ ...meta, timestamp: at, payload: { ...meta.payload, id, timestamp: at, cwd: where } })}\n`);
    return file;
  };
  const now = new Date();
  const today = now.toISOString().slice(0, 10).replaceAll('-', '/');
  const at = (s: number) => new Date(now.getTime() + s * 1000).toISOString();
  const startedAt = at(-60);
  rollout(today, 'before', at(-120), cwd);
  rollout(today, 'elsewhere', at(-50), '/somewhere/else');
  const ours = rollout(today, 'ours', at(-40), cwd);
  rollout(today, 'later', at(-30), cwd);
  const old = rollout('2025/01/02', 'resumed', '2025-01-02T10:00:00.000Z', '/old/place');
  const place = { cwd, env: { CODEX_HOME: home }, agentSessionId: null, startedAt };
  assert.equal(await transcriptPath(codex, place), ours);
  assert.equal(await transcriptPath(codex, { ...place, agentSessionId: 'resumed' }), old);
  assert.equal(await transcriptPath(codex, { ...place, agentSessionId: 'unknown' }), null);
  assert.equal(await transcriptPath(codex, { ...place, startedAt: at(-10) }), null, 'none created since');
  // ~/.codex without CODEX_HOME; the working directory by its real path.
  const user = makeTempDir(t, 'grove-codex-user-');
  symlinkSync(home, path.join(user, '.codex'));
  symlinkSync(cwd, path.join(user, 'cwd-link'));
  assert.equal(await transcriptPath(codex, { ...place, cwd: path.join(user, 'cwd-link'), env: { HOME: user } }), path.join(user, '.codex', path.relative(home, ours)));
});

test('readTranscript: the whole lines from an offset and the offset after them; a line being written waits, as does what is past the limit', async (t) => {
  const file = path.join(makeTempDir(t, 'grove-transcript-'), 't.jsonl');
  writeFileSync(file, '{"a":"é"}\r\n{"b":2}\n{"c":');
  const first = await readTranscript(file, 0);
  assert.deepEqual(first, { lines: ['{"a":"é"}', '{"b":2}'], offset: Buffer.byteLength('{"a":"é"}\r\n{"b":2}\n') });
  assert.deepEqual(await readTranscript(file, first.offset), { lines: [], offset: first.offset });
  appendFileSync(file, '3}\n');
  assert.deepEqual(await readTranscript(file, first.offset), { lines: ['{"c":3}'], offset: first.offset + 8 });
  // A limit of 4 bytes: a read takes whole lines past it only when one is longer.
  assert.deepEqual(await readTranscript(file, 0, 4), { lines: ['{"a":"é"}'], offset: Buffer.byteLength('{"a":"é"}\r\n') });
  assert.deepEqual(await readTranscript(file, 1000), { lines: [], offset: 1000 });
});
