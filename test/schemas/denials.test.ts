import assert from 'node:assert/strict';
import test from 'node:test';
import { deniedCount, denialSummary, describeDenial } from '../../schemas/denials.ts';

test('a denied call in words: the tool, then what its input says it would do (command, file, url…), else the input as JSON; cut with an ellipsis', () => {
  assert.equal(describeDenial({ tool: 'Bash', input: { command: 'tee ran.txt </dev/null\n&& echo done', description: 'Run' } }), 'Bash tee ran.txt </dev/null && echo done');
  assert.equal(describeDenial({ tool: 'Write', input: { file_path: 'a.txt', content: 'secret' } }), 'Write a.txt');
  assert.equal(describeDenial({ tool: 'WebFetch', input: { url: 'https://docs.rs', prompt: 'read' } }), 'WebFetch https://docs.rs');
  assert.equal(describeDenial({ tool: 'mcp__x__y', input: { n: 1 } }), 'mcp__x__y {"n":1}');
  assert.equal(describeDenial({ tool: 'Bash', input: { command: 'x'.repeat(50) } }, 12), 'Bash xxxxxx…');
  assert.equal(describeDenial({ tool: 'Bash', input: { command: 'ls' } }, 12), 'Bash ls');
});

test('a summary counts the calls and lists each; none (or a result recorded before denials) is null', () => {
  assert.equal(deniedCount(1), '1 call denied');
  assert.equal(deniedCount(2), '2 calls denied');
  assert.equal(denialSummary([{ tool: 'Bash', input: { command: 'npm test' } }]), '1 call denied: Bash npm test');
  assert.equal(denialSummary([{ tool: 'Bash', input: { command: 'npm test' } }, { tool: 'Write', input: { file_path: 'a' } }]), '2 calls denied: Bash npm test; Write a');
  assert.equal(denialSummary([]), null);
  assert.equal(denialSummary(undefined), null);
});
