import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { nextClockTime, outputReader, type Reading } from '../../daemon/agents/dialects.ts';

const AT = '2026-11-23T20:00:00.000Z';
const START: Reading = { agent_session_id: null, result: null, limit_resets_at: null };
const read = (def: Parameters<typeof outputReader>[0], lines: unknown[], from = START) =>
  outputReader(def)!(from, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))), AT);

test('claude: session_id of the first line that has one, the final result, a rejected rate_limit_event or the older "usage limit reached|<epoch>"', () => {
  const r = read({ format: 'claude' }, [
    'not json',
    '{"broken',
    { type: 'system', subtype: 'init', session_id: 'aaa-1' },
    { type: 'assistant', session_id: 'bbb-2' },
    { type: 'rate_limit_event', rate_limit_info: { status: 'allowed', resetsAt: 1 } },
    { type: 'result', is_error: false, result: 'done', total_cost_usd: 0.5, usage: { input_tokens: 3, output_tokens: 4 } },
  ]);
  assert.deepEqual(r, { agent_session_id: 'aaa-1', result: { text: 'done', is_error: false, cost_usd: 0.5, input_tokens: 3, output_tokens: 4, denials: [] }, limit_resets_at: null });
  const limited = read({ format: 'claude' }, [{ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1795000000 } }]);
  assert.equal(limited.limit_resets_at, new Date(1795000000 * 1000).toISOString());
  const old = read({ format: 'claude' }, [{ type: 'result', is_error: true, result: 'Claude AI usage limit reached|1795000000' }]);
  assert.equal(old.limit_resets_at, new Date(1795000000 * 1000).toISOString());
  assert.equal(old.result!.cost_usd, null, 'a field the agent does not report is null');
  // An id that would read as an option, or is not a plain token, is not taken.
  assert.equal(read({ format: 'claude' }, [{ session_id: '--evil' }, { session_id: 'a b' }]).agent_session_id, null);
  // Unchanged: the same object, so the pump stores nothing extra.
  assert.equal(outputReader({ format: 'claude' })!(START, ['plain text', '{"type":"assistant"}'], AT), START);
});

test('codex: thread.started, the last agent message, tokens of its turns, a failed turn and its usage limit clock time', () => {
  const r = read({ format: 'codex' }, [
    { type: 'thread.started', thread_id: '0199-abc' },
    { type: 'item.completed', item: { type: 'reasoning', text: 'hmm' } },
    { type: 'item.completed', item: { type: 'agent_message', text: 'first' } },
    { type: 'item.completed', item: { type: 'agent_message', text: 'final answer' } },
    { type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 50, output_tokens: 7 } },
  ]);
  assert.deepEqual(r, { agent_session_id: '0199-abc', result: { text: 'final answer', is_error: false, cost_usd: null, input_tokens: 100, output_tokens: 7, denials: [] }, limit_resets_at: null });
  const failed = read({ format: 'codex' }, [{ type: 'turn.failed', error: { message: "You've hit your usage limit. Upgrade or try again at 9:37 PM." } }]);
  assert.equal(failed.result!.is_error, true);
  assert.equal(failed.limit_resets_at, nextClockTime('try again at 9:37 PM', AT));
  // A passing error is not a result; a limit in one still counts.
  const retrying = read({ format: 'codex' }, [{ type: 'error', message: 'Reconnecting... 2/5 (stream disconnected)' }]);
  assert.equal(retrying.result, null);
  assert.ok(read({ format: 'codex' }, [{ type: 'error', message: 'You hit your usage limit, try again at 9:37 PM.' }]).limit_resets_at);
});

test('codex (recorded, codex app-server through grove\'s bridge): the thread id from its answer to thread/start, the last agent message, tokens of each model request summed, a completed turn', () => {
  // An escalated `touch`, declined, then "Refused, fine." (codex-cli 0.169.0).
  assert.deepEqual(readRecorded({ format: 'codex' }, 'codex-app-declined'), {
    agent_session_id: '01a20d12-f12d-79c1-a9d2-ac3b9e75973f',
    result: { text: 'Refused, fine.', is_error: false, cost_usd: null, input_tokens: 20, output_tokens: 141, denials: [] },
    limit_resets_at: null,
  });
});

test('codex app-server: a resumed thread\'s id from thread/resume\'s answer, a failed turn is an error with its message, a usage limit names its clock time', () => {
  // On resume the server replays the thread's last usage before the turn starts: not this session's.
  const usage = (input: number, output: number) => ({ method: 'thread/tokenUsage/updated', params: { tokenUsage: { total: { inputTokens: 99, outputTokens: 99 }, last: { inputTokens: input, outputTokens: output } } } });
  const resumed = read({ format: 'codex' }, [
    { id: 2, result: { thread: { id: '0199-abc' } } },
    { method: 'thread/started', params: { thread: { id: 'other' } } },
    usage(50, 60),
    { method: 'turn/started', params: { turn: { id: 'u' } } },
    usage(10, 5),
    usage(12, 7),
  ]);
  assert.equal(resumed.agent_session_id, '0199-abc');
  assert.deepEqual([resumed.result!.input_tokens, resumed.result!.output_tokens], [22, 12]);
  const message = "You've hit your usage limit. Upgrade or try again at 9:37 PM.";
  const limited = read({ format: 'codex' }, [
    { method: 'item/completed', params: { item: { type: 'agentMessage', text: 'working' } } },
    { method: 'error', params: { error: { message, codexErrorInfo: 'usageLimitExceeded' }, willRetry: false } },
    { method: 'turn/completed', params: { threadId: 't', turn: { id: 'u', status: 'failed', error: { message, codexErrorInfo: 'usageLimitExceeded' } } } },
  ]);
  assert.deepEqual(limited.result, { text: message, is_error: true, cost_usd: null, input_tokens: null, output_tokens: null, denials: [] });
  assert.equal(limited.limit_resets_at, nextClockTime('try again at 9:37 PM', AT));
  // Another error names no reset time; a retried one is not the result.
  const retried = read({ format: 'codex' }, [{ method: 'error', params: { error: { message: 'Reconnecting... 2/5', codexErrorInfo: 'other' }, willRetry: true } }]);
  assert.deepEqual(retried, START);
  const interrupted = read({ format: 'codex' }, [{ method: 'turn/completed', params: { turn: { status: 'interrupted', error: null } } }]);
  assert.equal(interrupted.result!.is_error, true);
});

test('nextClockTime: the next time the local clock shows it, after the line', () => {
  const at = new Date(2026, 10, 23, 20, 0, 0).toISOString(); // 20:00 local
  assert.equal(nextClockTime('try again at 9:37 PM.', at), new Date(2026, 10, 23, 21, 37).toISOString());
  assert.equal(nextClockTime('try again at 7:05 PM', at), new Date(2026, 10, 24, 19, 5).toISOString(), 'past today: tomorrow');
  assert.equal(nextClockTime('try again at 12:10 AM', at), new Date(2026, 10, 24, 0, 10).toISOString());
  assert.equal(nextClockTime('try again at 21:37', at), new Date(2026, 10, 23, 21, 37).toISOString(), 'a 24-hour clock');
  assert.equal(nextClockTime('try again later', at), null);
});

test('gemini: init.session_id, the assistant message after the last tool call, the result stats, "retry after Ns"', () => {
  const r = read({ format: 'gemini' }, [
    { type: 'init', session_id: 'g-1', model: 'm' },
    { type: 'message', role: 'user', content: 'hi' },
    { type: 'message', role: 'assistant', content: 'Let me look', delta: true },
    { type: 'tool_use', tool_name: 'read_file' },
    { type: 'message', role: 'assistant', content: 'All ', delta: true },
    { type: 'message', role: 'assistant', content: 'good.', delta: true },
    { type: 'result', status: 'success', stats: { total_tokens: 30, input_tokens: 20, output_tokens: 10 } },
  ]);
  assert.deepEqual(r, { agent_session_id: 'g-1', result: { text: 'All good.', is_error: false, cost_usd: null, input_tokens: 20, output_tokens: 10, denials: [] }, limit_resets_at: null });
  const quota = read({ format: 'gemini' }, [{ type: 'result', status: 'error', error: { message: 'Quota exceeded. Suggested retry after 3600s.' } }]);
  assert.equal(quota.result!.is_error, true);
  assert.equal(quota.limit_resets_at, '2026-11-23T21:00:00.000Z');
});

test('opencode: sessionID, the last text part, tokens and cost summed over steps, an error', () => {
  const r = read({ format: 'opencode' }, [
    { type: 'step_start', sessionID: 'ses_1', part: {} },
    { type: 'text', sessionID: 'ses_1', part: { type: 'text', text: 'done' } },
    { type: 'step_finish', sessionID: 'ses_1', part: { cost: 0.25, tokens: { input: 5, output: 2 } } },
    { type: 'step_finish', sessionID: 'ses_1', part: { cost: 0.25, tokens: { input: 1, output: 1 } } },
  ]);
  assert.deepEqual(r, { agent_session_id: 'ses_1', result: { text: 'done', is_error: false, cost_usd: 0.5, input_tokens: 6, output_tokens: 3, denials: [] }, limit_resets_at: null });
  assert.equal(read({ format: 'opencode' }, [{ type: 'error', error: { name: 'APIError', data: { message: 'no key' } } }]).result!.text, 'no key');
});

test('a custom agent: session_id_field names the field, with or without a format; neither: nothing is parsed', () => {
  assert.equal(read({ session_id_field: 'conv' }, [{ type: 'x' }, { conv: 'c-9' }, { conv: 'c-10' }]).agent_session_id, 'c-9');
  assert.equal(read({ format: 'claude', session_id_field: 'thread' }, [{ session_id: 'no' }, { thread: 't-1' }]).agent_session_id, 't-1');
  assert.equal(outputReader({}), null);
  // Once read, an id stays: a later reading starts from the stored one.
  assert.equal(read({ format: 'claude' }, [{ session_id: 'new' }], { ...START, agent_session_id: 'kept' }).agent_session_id, 'kept');
});

test("claude: the result's permission_denials are result.denials, {tool, input}; a result without them has none", () => {
  const r = read({ format: 'claude' }, [
    { type: 'system', subtype: 'init', session_id: 'd-1' },
    {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'I could not run it.',
      permission_denials: [
        { tool_name: 'Bash', tool_use_id: 'toolu_1', tool_input: { command: 'tee ran.txt </dev/null && echo done', description: 'Run' } },
        { tool_name: 'Write', tool_use_id: 'toolu_2', tool_input: { file_path: '/w/a.txt', content: 'x\n' } },
        // Not a denial it can name: left out rather than shown as an unnamed tool.
        { tool_use_id: 'toolu_3', tool_input: {} },
        'junk',
        // An input that is not an object is shown as none.
        { tool_name: 'Odd', tool_use_id: 'toolu_4', tool_input: 'ls' },
      ],
    },
  ]);
  assert.deepEqual(r.result!.denials, [
    { tool: 'Bash', input: { command: 'tee ran.txt </dev/null && echo done', description: 'Run' } },
    { tool: 'Write', input: { file_path: '/w/a.txt', content: 'x\n' } },
    { tool: 'Odd', input: {} },
  ]);
  assert.equal(r.result!.is_error, false, 'the agent still calls it a success; the denials say otherwise');
  assert.deepEqual(read({ format: 'claude' }, [{ type: 'result', is_error: false, result: 'ok' }]).result!.denials, []);
  assert.deepEqual(read({ format: 'claude' }, [{ type: 'result', is_error: false, result: 'ok', permission_denials: null }]).result!.denials, []);
});

// Lines printed by the real CLIs (test/fixtures/agent-output/, paths shortened), driven by a local
// scripted model server: Copilot CLI 1.0.102 and Qwen Code 0.15.10.
const recorded = (name: string) =>
  readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'agent-output', `${name}.jsonl`), 'utf8').split('\n').filter(Boolean);
const readRecorded = (def: Parameters<typeof outputReader>[0], name: string) => outputReader(def)!(START, recorded(name), AT);

test('copilot (recorded): the last assistant message after its tool calls, sessionId from the result line, no tokens or cost', () => {
  // `--allow-tool=write`: the file was created, the shell command denied, then "Done.".
  assert.deepEqual(readRecorded({ format: 'copilot' }, 'copilot-edit'), {
    agent_session_id: 'c9395cd5-dfeb-41b9-848b-471fcf63700a',
    result: { text: 'Done.', is_error: false, cost_usd: null, input_tokens: null, output_tokens: null, denials: [] },
    limit_resets_at: null,
  });
  // No model reachable: it retries, then a session.error and exitCode 1.
  const refused = readRecorded({ format: 'copilot' }, 'copilot-refused');
  assert.equal(refused.agent_session_id, '0cb916db-26aa-40f2-86b5-1ba81b225fd2');
  assert.equal(refused.result!.is_error, true);
  assert.match(refused.result!.text!, /^Could not connect to local model provider/);
});

test('copilot: a message that only asks for tools clears the text, assistant.usage tokens add up, a rate limit with retryAfterSeconds is a limit', () => {
  const r = read({ format: 'copilot' }, [
    { type: 'assistant.message', data: { content: 'Let me look', toolRequests: [{ name: 'view' }] } },
    { type: 'assistant.message', data: { content: '', toolRequests: [{ name: 'bash' }] } },
    { type: 'assistant.usage', ephemeral: true, data: { inputTokens: 10, outputTokens: 2 } },
    { type: 'assistant.usage', ephemeral: true, data: { inputTokens: 5, outputTokens: 1 } },
    { type: 'result', sessionId: 's-1', exitCode: 0, usage: { premiumRequests: 1 } },
  ]);
  assert.deepEqual(r, { agent_session_id: 's-1', result: { text: null, is_error: false, cost_usd: null, input_tokens: 15, output_tokens: 3, denials: [] }, limit_resets_at: null });
  const limited = read({ format: 'copilot' }, [
    { type: 'session.error', data: { errorType: 'rate_limit', errorCode: 'user_weekly_rate_limited', message: 'You have hit your rate limit.' } },
    { type: 'auto_mode_switch.requested', data: { requestId: 'q', retryAfterSeconds: 3600 } },
    { type: 'result', sessionId: 's-2', exitCode: 0 },
  ]);
  assert.deepEqual(limited.result, { text: 'You have hit your rate limit.', is_error: true, cost_usd: null, input_tokens: null, output_tokens: null, denials: [] });
  assert.equal(limited.limit_resets_at, '2026-11-23T21:00:00.000Z');
});

test('qwen (recorded): Claude Code\'s shape with tokens and no cost; "[API Error: …]" in a success result and a failed start are errors', () => {
  assert.deepEqual(readRecorded({ format: 'qwen' }, 'qwen-edit'), {
    agent_session_id: '3cb916db-26aa-40f2-86b5-1ba81b225fd3',
    // In auto-edit Qwen refused the shell command by itself: Claude Code's permission_denials.
    result: { text: 'All good.', is_error: false, cost_usd: null, input_tokens: 360, output_tokens: 21, denials: [{ tool: 'run_shell_command', input: { command: 'touch /src/task/qshell.txt' } }] },
    limit_resets_at: null,
  });
  const refused = readRecorded({ format: 'qwen' }, 'qwen-refused');
  assert.equal(refused.agent_session_id, '4cb916db-26aa-40f2-86b5-1ba81b225fd3');
  assert.deepEqual(refused.result, { text: '[API Error: Connection error. (cause: fetch failed)]', is_error: true, cost_usd: null, input_tokens: 0, output_tokens: 0, denials: [] });
  assert.equal(readRecorded({ format: 'claude' }, 'qwen-refused').result!.is_error, false, 'read as Claude Code, the same lines would pass for a success');
  const noAuth = readRecorded({ format: 'qwen' }, 'qwen-noauth');
  assert.equal(noAuth.result!.is_error, true);
  assert.match(noAuth.result!.text!, /^No auth type is selected/);
});

test('acp: a tool call asked about before it is announced (Gemini CLI sends session/request_permission, then tool_call_update) also ends what was said before it', () => {
  const update = (u: object) => ({ method: 'session/update', params: { sessionId: 's-1', update: u } });
  const chunk = (text: string) => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  const toolCall = { toolCallId: 'c1', title: 'touch ran.txt', kind: 'execute', status: 'pending' };
  const r = read({ format: 'acp' }, [
    { type: 'prompt', sessionId: 's-1' },
    chunk('Running it.'),
    { method: 'session/request_permission', params: { sessionId: 's-1', toolCall, options: [] } },
    { type: 'permission', toolCallId: 'c1', response: { outcome: { outcome: 'selected', optionId: 'proceed_once' } } },
    update({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed' }),
    chunk('Created ran.txt.'),
    { type: 'result', sessionId: 's-1', stopReason: 'end_turn', usage: null, cost: null },
  ]);
  assert.equal(r.result!.text, 'Created ran.txt.');
});

test('acp (the bridge\'s lines): the session line\'s id, the agent\'s message after its last tool call, nothing said before the prompt or replayed, the result\'s stopReason, usage and USD cost; an error and its retry time', () => {
  const update = (u: object, extra: object = {}) => ({ method: 'session/update', params: { sessionId: 's-1', update: u }, ...extra });
  const chunk = (text: string) => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  const r = read({ protocol: 'acp', command: ['x'] } as any, [
    { type: 'initialize', response: { protocolVersion: 1 } },
    update(chunk('old turn'), { replay: true }),
    { type: 'session', how: 'load', sessionId: 's-1' },
    update(chunk('[MODE_UPDATE] autoEdit')),
    { type: 'mode', sessionId: 's-1', modeId: 'autoEdit' },
    { type: 'prompt', sessionId: 's-1' },
    update(chunk('let me look')),
    update({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'ls', kind: 'execute' }),
    update(chunk('all ')),
    update(chunk('done')),
    update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } }),
    { type: 'result', sessionId: 's-1', stopReason: 'end_turn', usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 }, cost: { amount: 0.5, currency: 'USD' } },
  ]);
  assert.deepEqual(r, { agent_session_id: 's-1', result: { text: 'all done', is_error: false, cost_usd: 0.5, input_tokens: 7, output_tokens: 3, denials: [] }, limit_resets_at: null });
  // The format a user wrote does not matter: an ACP agent's output is the bridge's.
  assert.equal(read({ protocol: 'acp', format: 'claude', command: ['x'] } as any, [{ type: 'session', sessionId: 's-2' }]).agent_session_id, 's-2');
  const refused = read({ format: 'acp' }, [update(chunk('no')), { type: 'result', sessionId: 's-1', stopReason: 'refusal', usage: null, cost: { amount: 1, currency: 'EUR' } }]);
  assert.deepEqual([refused.result!.text, refused.result!.is_error, refused.result!.cost_usd], ['no', true, null]);
  const failed = read({ format: 'acp' }, [{ type: 'result', sessionId: null, stopReason: null, error: 'Quota exceeded. Please retry after 60s.' }]);
  assert.deepEqual([failed.result!.text, failed.result!.is_error, failed.agent_session_id], ['Quota exceeded. Please retry after 60s.', true, null]);
  assert.equal(failed.limit_resets_at, new Date(Date.parse(AT) + 60_000).toISOString());
});

test('a usage limit that resets on another day, as Codex words it with its date, is that day and time on this machine', () => {
  const text = 'You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again at Nov 28th, 2026 12:04 AM.';
  assert.equal(nextClockTime(text, AT), new Date(2026, 10, 28, 0, 4).toISOString());
  assert.equal(nextClockTime('try again at Dec 1st, 2026 3:15 PM', AT), new Date(2026, 11, 1, 15, 15).toISOString());
  assert.equal(nextClockTime('try again at Foo 1st, 2026 3:15 PM', AT), null, 'no such month: not a time');
  const failed = read({ format: 'codex' }, [{ type: 'turn.failed', error: { message: text } }]);
  assert.equal(failed.limit_resets_at, new Date(2026, 10, 28, 0, 4).toISOString(), 'the session says when');
});
