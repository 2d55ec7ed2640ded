// The ACP bridge alone (no daemon): a permission request as grove's approval, a verdict as the
// option it picks, a question's text answer as an elicitation's content; its command line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { addStreamedUsage, askOf, contentOf, outcomeOf, usageOf } from '../../daemon/bridges/acp.ts';
import { ruleMatches } from '../../daemon/approvals/rules.ts';
import { DAEMON_ENTRY } from '../helpers/daemon.ts';

const OPTIONS = [
  { optionId: 'proceed_always', name: 'Allow always', kind: 'allow_always' as const },
  { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' as const },
  { optionId: 'cancel', name: 'Reject', kind: 'reject_once' as const },
];

test('askOf: an execute call is Bash with its command, an edit is Edit with the file and its diff, keyed by agent session and tool call; the whole request goes along; Claude Code rules match them', () => {
  const run = askOf({ sessionId: 's1', options: OPTIONS, toolCall: { toolCallId: 't1', title: 'npm test', kind: 'execute', rawInput: { command: 'npm test', description: 'tests' } } });
  assert.equal(run.key, 's1:t1');
  assert.equal(run.kind, 'tool');
  assert.equal(run.tool, 'Bash');
  assert.equal(run.input.command, 'npm test');
  assert.deepEqual(run.input.raw_input, { command: 'npm test', description: 'tests' });
  assert.deepEqual(run.input.options, OPTIONS);
  assert.equal(ruleMatches('Bash(npm test:*)', run, '/w'), true);
  assert.equal(ruleMatches('Bash(npm run:*)', run, '/w'), false);

  const edit = askOf({
    sessionId: 's1',
    options: OPTIONS,
    toolCall: { toolCallId: 't2', title: 'Write a.ts', kind: 'edit', locations: [{ path: '/w/src/a.ts' }], content: [{ type: 'diff', path: '/w/src/a.ts', oldText: 'a', newText: 'b' }] },
  });
  assert.deepEqual([edit.tool, edit.input.file_path, edit.input.old_string, edit.input.new_string], ['Edit', '/w/src/a.ts', 'a', 'b']);
  assert.equal(ruleMatches('Edit(src/**)', edit, '/w'), true);
  assert.equal(ruleMatches('Edit(test/**)', edit, '/w'), false);

  const fetch = askOf({ sessionId: 's1', options: OPTIONS, toolCall: { toolCallId: 't3', title: 'fetch', kind: 'fetch', rawInput: { url: 'https://docs.rs/x' } } });
  assert.equal(ruleMatches('WebFetch(domain:docs.rs)', fetch, '/w'), true);
  const other = askOf({ sessionId: 's1', options: OPTIONS, toolCall: { toolCallId: 't4', title: 'Switch to plan', kind: 'switch_mode' } });
  assert.equal(other.tool, 'Switch to plan', 'another kind is named by its title');
  // A shell call without rawInput still shows what it runs (its title).
  assert.equal(askOf({ sessionId: 's', options: [], toolCall: { toolCallId: 'x', title: 'rm -rf build', kind: 'execute' } }).input.command, 'rm -rf build');
});

test('outcomeOf: allow picks allow once, deny and expiry reject once with grove\'s words; lacking such an option, the next of its side, else cancelled', () => {
  assert.deepEqual(outcomeOf(OPTIONS, { behavior: 'allow', answer: null }), { outcome: { outcome: 'selected', optionId: 'proceed_once' } });
  assert.deepEqual(outcomeOf(OPTIONS, { behavior: 'deny', message: 'no' }), { outcome: { outcome: 'selected', optionId: 'cancel' }, _meta: { grove: { message: 'no' } } });
  assert.deepEqual(outcomeOf(OPTIONS, { behavior: 'expired', message: 'no decision within 5 s' }).outcome, { outcome: 'selected', optionId: 'cancel' });
  assert.deepEqual(outcomeOf([OPTIONS[0]!], { behavior: 'allow', answer: null }).outcome, { outcome: 'selected', optionId: 'proceed_always' });
  assert.deepEqual(outcomeOf([OPTIONS[1]!], { behavior: 'deny', message: 'no' }), { outcome: { outcome: 'cancelled' } });
});

test('contentOf: one field takes the text (as a number or boolean where the schema says), several take a JSON object or the text in each text field', () => {
  assert.deepEqual(contentOf({ properties: { answer: { type: 'string' } } }, 'postgres'), { answer: 'postgres' });
  assert.deepEqual(contentOf({ properties: { n: { type: 'integer' } } }, '42'), { n: 42 });
  assert.deepEqual(contentOf({ properties: { ok: { type: 'boolean' } } }, 'yes'), { ok: true });
  assert.deepEqual(contentOf({ properties: { a: { type: 'string' }, b: { type: 'number' } } }, '{"a":"x","b":2}'), { a: 'x', b: 2 });
  assert.deepEqual(contentOf({ properties: { a: { type: 'string' }, b: { type: 'string' } } }, 'same'), { a: 'same', b: 'same' });
});

test('grove acp-bridge: without --session or without the agent after -- it is a usage error (exit 2); an agent that cannot start ends in a result line saying so (exit 1)', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [DAEMON_ENTRY, 'acp-bridge', ...args], { encoding: 'utf8', input: '', env: { ...process.env, GROVE_SOCKET: '/nonexistent/grove.sock' } });
  const noSession = run(['--', 'agent']);
  assert.equal(noSession.status, 2, noSession.stderr);
  assert.match(noSession.stderr, /grove acp-bridge needs --session <grove session id>/);
  const noAgent = run(['--session', 's1']);
  assert.equal(noAgent.status, 2, noAgent.stderr);
  assert.match(noAgent.stderr, /grove acp-bridge needs the agent's command after --/);
  const missing = run(['--session', 's1', '--prompt=hi', '--', '/nonexistent/acp-agent']);
  assert.equal(missing.status, 1, missing.stderr);
  assert.deepEqual(JSON.parse(missing.stdout.trim()), { type: 'result', sessionId: null, stopReason: null, error: 'could not start /nonexistent/acp-agent: spawn /nonexistent/acp-agent ENOENT' });
});

test("usageOf: ACP's usage as the agent sent it; else Gemini CLI's _meta.quota.token_count (its prompt response, 0.61.0); else null", () => {
  assert.deepEqual(usageOf({ stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } } as any), { inputTokens: 10, outputTokens: 5, totalTokens: 15 });
  const gemini = { stopReason: 'end_turn', _meta: { quota: { token_count: { input_tokens: 812, output_tokens: 24 }, model_usage: [{ model: 'gemini-2.5-pro', token_count: { input_tokens: 812, output_tokens: 24 } }] } } };
  assert.deepEqual(usageOf(gemini), { inputTokens: 812, outputTokens: 24 });
  assert.deepEqual(usageOf({ _meta: { quota: { token_count: { output_tokens: 3 } } } }), { inputTokens: null, outputTokens: 3 });
  for (const none of [{}, { usage: null }, { _meta: null }, { _meta: { quota: {} } }, { _meta: { quota: { token_count: { input_tokens: '7' } } } }]) assert.equal(usageOf(none), null, JSON.stringify(none));
});

test("addStreamedUsage: the tokens of each model call Qwen Code sends on an agent_message_chunk (_meta.usage, 0.15.10) add up; usageOf takes them when the response has none", () => {
  const chunk = (inputTokens: number, outputTokens: number) => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '' }, _meta: { usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }, durationMs: 40 } });
  let turn = addStreamedUsage(null, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } });
  assert.equal(turn, null, 'a chunk without usage adds nothing');
  turn = addStreamedUsage(turn, chunk(1200, 30));
  turn = addStreamedUsage(turn, { sessionUpdate: 'tool_call', _meta: { usage: { inputTokens: 99, outputTokens: 99 } } });
  turn = addStreamedUsage(turn, chunk(1300, 12));
  assert.deepEqual(turn, { inputTokens: 2500, outputTokens: 42 });
  assert.deepEqual(usageOf({}, turn), { inputTokens: 2500, outputTokens: 42 });
  assert.deepEqual(usageOf({ usage: { inputTokens: 1, outputTokens: 2 } }, turn), { inputTokens: 1, outputTokens: 2 }, "the response's own usage first");
});
