// ui/src/turns.ts alone: the items the dashboard shows of an agent's JSON lines, here those of the
// transcripts a terminal session's conversation is read from (DESIGN §21), real samples of Claude
// Code 2.1.197's session JSONL and Codex 0.171.0's rollout (test/fixtures/transcripts/).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { itemsOf } from '../../ui/src/turns.ts';

const sample = (name: string) =>
  readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'transcripts', name), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((text, i) => ({ seq: i + 1, stream: 'stdout' as const, text, at: '2026-11-28T00:00:00.000Z' }));
const shown = (name: string) => sample(name).flatMap(itemsOf).map((it) => [it.kind, it.title ?? null, it.text]);

test("Claude Code's transcript: the assistant's text, its tool call and the call's result; not the prompts or the bookkeeping", () => {
  assert.deepEqual(shown('claude-tui.jsonl'), [
    ['text', null, 'I will write a file.'],
    ['tool', 'Bash', JSON.stringify({ command: 'echo hi > a.txt', description: 'write a file' }, null, 2)],
    ['tool-result', null, '(Bash completed with no output)'],
    ['text', null, 'Done: a.txt says hi.'],
    ['text', null, 'Second answer.'],
  ]);
});

test("Codex's rollout: the assistant's messages, its function call and the call's output; not the prompts or the bookkeeping", () => {
  const items = shown('codex-exec-1.jsonl');
  assert.deepEqual(
    items.map(([kind, title]) => [kind, title]),
    [
      ['text', null],
      ['tool', 'exec_command'],
      ['tool-result', null],
      ['text', null],
    ],
  );
  assert.equal(items[0]![2], 'I will write a file.');
  assert.match(String(items[1]![2]), /echo hi > a\.txt/);
  assert.equal(items[3]![2], 'Done: a.txt says hi.');
});
