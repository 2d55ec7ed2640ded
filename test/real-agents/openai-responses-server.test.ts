// The scripted Responses API of the Codex tests (test/helpers/openai-responses-server.ts over
// test/helpers/scripted-server.ts), alone:
// no agent CLI, plain HTTP requests as Codex sends them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { callOutputs, calls, startResponsesServer } from '../helpers/openai-responses-server.ts';

const post = async (url: string, body: unknown) => {
  const res = await request(`${url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
};

// SSE text as parsed data; each event's name must be its data's type, as the API sends it.
const events = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [event, data] = block.split('\n');
      const parsed = JSON.parse(data!.slice('data: '.length));
      assert.equal(event, `event: ${parsed.type}`);
      return parsed;
    });

test('a streamed function call is the API\'s SSE: created, in_progress, the message and the call added and done, completed with usage; the next turn reads the output sent back; past the script, a 400', async (t) => {
  const m = await startResponsesServer(t, [{ text: 'Running it.', call: { name: 'exec_command', arguments: { cmd: 'touch ran.txt' } } }, { text: 'Done.' }]);
  assert.match(m.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const first = await post(m.url, { model: 'gpt-x', stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }] });
  assert.equal(first.status, 200);
  assert.equal(first.type, 'text/event-stream');
  const evs = events(first.text);
  assert.deepEqual(evs.map((e) => e.type), [
    'response.created', 'response.in_progress',
    'response.output_item.added', 'response.output_text.delta', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
    'response.completed',
  ]);
  assert.deepEqual(evs.map((e) => e.sequence_number), evs.map((_, i) => i));
  const done = evs.at(-1).response;
  assert.equal(done.model, 'gpt-x');
  assert.equal(done.status, 'completed');
  assert.ok(done.usage.output_tokens > 0 && done.usage.total_tokens === done.usage.input_tokens + done.usage.output_tokens);
  const call = evs[8].item;
  assert.deepEqual([call.type, call.name, JSON.parse(call.arguments)], ['function_call', 'exec_command', { cmd: 'touch ran.txt' }]);
  assert.equal(evs[4].item.content[0].text, 'Running it.');

  const back = [
    { type: 'function_call', name: 'exec_command', arguments: call.arguments, call_id: call.call_id },
    { type: 'function_call_output', call_id: call.call_id, output: 'rejected by user' },
  ];
  const second = await post(m.url, { model: 'gpt-x', stream: false, input: back });
  assert.equal(second.status, 200);
  assert.deepEqual(JSON.parse(second.text).output.map((o: any) => o.content[0].text), ['Done.']);
  assert.deepEqual(callOutputs(m.turns()[1]!), [{ call_id: call.call_id, output: 'rejected by user' }]);
  assert.deepEqual(calls(m.turns()[1]!).map((c) => c.call_id), [call.call_id]);

  const past = await post(m.url, { model: 'gpt-x', stream: true, input: [] });
  assert.equal(past.status, 400);
  assert.match(JSON.parse(past.text).error.message, /the script has 2 turns; request 3 of the loop has none/);
  assert.equal(m.turns().length, 2);
});

test('a custom (freeform) tool call streams its input as custom_tool_call_input events; an HTTP error turn is answered with its status and body', async (t) => {
  const m = await startResponsesServer(t, [{ custom: { name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' } }, { fail: { status: 429, body: { error: { type: 'usage_limit_reached' } } } }]);
  const evs = events((await post(m.url, { stream: true, input: [] })).text);
  assert.deepEqual(evs.map((e) => e.type).slice(2, -1), ['response.output_item.added', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done']);
  assert.equal(evs[2].item.input, '', 'added with no input yet');
  assert.deepEqual([evs[5].item.type, evs[5].item.name, evs[5].item.input], ['custom_tool_call', 'apply_patch', '*** Begin Patch\n*** End Patch\n']);
  const limited = await post(m.url, { stream: true, input: [] });
  assert.deepEqual([limited.status, JSON.parse(limited.text)], [429, { error: { type: 'usage_limit_reached' } }]);
});
