// The scripted model servers of the real agent tests (test/helpers/model-server.ts, gemini-server.ts,
// openai-server.ts), alone: no agent CLI, plain HTTP requests as each provider's SDK sends them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { functionNames as geminiFunctionNames, functionResponses, startGeminiServer } from '../helpers/gemini-server.ts';
import { startModelServer, toolNames, toolResults } from '../helpers/model-server.ts';
import { functionNames as openaiFunctionNames, startOpenAIServer, toolMessages } from '../helpers/openai-server.ts';

const post = async (url: string, body: unknown) => {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
};

// SSE text as [event, data] pairs; each event's name must be its data's type, as the API sends it.
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

const loop = (messages: unknown[], extra: object = {}) => ({ model: 'claude-x', max_tokens: 100, tools: [{ name: 'Bash', input_schema: { type: 'object' } }], messages, ...extra });

test('a streamed tool call is the API\'s SSE: message_start, the block in input_json_delta pieces, message_delta tool_use, message_stop; the next turn reads the tool_result sent back', async (t) => {
  const m = await startModelServer(t, [{ text: 'Running it.', tool_use: { name: 'Bash', input: { command: 'touch ran.txt', description: 'Create ran.txt' } } }, { text: 'Done.' }]);
  const first = await post(`${m.url}/v1/messages?beta=true`, loop([{ role: 'user', content: 'go' }], { stream: true }));
  assert.equal(first.status, 200);
  assert.equal(first.type, 'text/event-stream');
  const evs = events(first.text);
  assert.deepEqual(
    evs.map((e) => e.type + (e.delta?.type ? `:${e.delta.type}` : '')),
    ['message_start', 'ping', 'content_block_start', 'content_block_delta:text_delta', 'content_block_stop', 'content_block_start', 'content_block_delta:input_json_delta', 'content_block_delta:input_json_delta', 'content_block_stop', 'message_delta', 'message_stop'],
  );
  assert.equal(evs[0].message.model, 'claude-x');
  assert.equal(evs[0].message.stop_reason, null);
  const tool = evs[5].content_block;
  assert.equal(tool.type, 'tool_use');
  assert.equal(tool.name, 'Bash');
  assert.match(tool.id, /^toolu_/);
  const pieces = evs.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json);
  assert.ok(pieces.every((p) => p !== ''), 'two non-empty pieces');
  assert.deepEqual(JSON.parse(pieces.join('')), { command: 'touch ran.txt', description: 'Create ran.txt' });
  assert.equal(evs[9].delta.stop_reason, 'tool_use');

  // The CLI sends the tool's result back; the next turn is plain text, not streamed here.
  const back = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'tool_use', id: tool.id, name: 'Bash', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: tool.id, is_error: true, content: [{ type: 'text', text: 'denied: not now' }] }] },
  ];
  const second = await post(`${m.url}/v1/messages`, loop(back));
  assert.equal(second.status, 200);
  const msg = JSON.parse(second.text);
  assert.deepEqual(msg.content, [{ type: 'text', text: 'Done.' }]);
  assert.equal(msg.stop_reason, 'end_turn');
  assert.equal(msg.role, 'assistant');

  assert.equal(m.turns().length, 2);
  assert.equal(m.turns()[0]!.query, '?beta=true');
  assert.deepEqual(toolNames(m.turns()[0]!), ['Bash']);
  assert.deepEqual(toolResults(m.turns()[1]!), [{ tool_use_id: tool.id, is_error: true, text: 'denied: not now' }]);
});

test('side requests (no tools) do not use up the script; count_tokens, models and HEAD / answer; a loop past the script is a 400 naming it, an unknown path a 404', async (t) => {
  const m = await startModelServer(t, [{ text: 'only turn' }], { side: (body) => `side for ${body.model}` });
  const side = await post(`${m.url}/v1/messages`, { model: 'claude-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'title?' }] });
  assert.deepEqual(JSON.parse(side.text).content, [{ type: 'text', text: 'side for claude-haiku' }]);
  const counted = await post(`${m.url}/v1/messages/count_tokens`, loop([{ role: 'user', content: 'hi' }]));
  assert.equal(counted.status, 200);
  assert.ok(JSON.parse(counted.text).input_tokens > 0);
  assert.equal((await request(`${m.url}/`, { method: 'HEAD' })).statusCode, 200);
  const models = await request(`${m.url}/v1/models`);
  assert.equal(models.statusCode, 200);
  assert.ok(Array.isArray(((await models.body.json()) as any).data));

  const only = await post(`${m.url}/v1/messages`, loop([{ role: 'user', content: 'hi' }], { stream: true }));
  assert.equal(events(only.text).find((e) => e.delta?.type === 'text_delta').delta.text, 'only turn');
  const past = await post(`${m.url}/v1/messages`, loop([{ role: 'user', content: 'again' }]));
  assert.equal(past.status, 400);
  assert.equal(JSON.parse(past.text).error.type, 'invalid_request_error');
  assert.match(JSON.parse(past.text).error.message, /the script has 1 turns/);
  const bad = await post(`${m.url}/v1/messages`, { model: 'x' });
  assert.equal(bad.status, 400);
  const unknown = await post(`${m.url}/v1/complete`, {});
  assert.equal(unknown.status, 404);
  assert.equal(JSON.parse(unknown.text).type, 'error');

  assert.equal(m.turns().length, 1, 'only the loop request with a turn counts');
  assert.deepEqual(
    m.requests.map((r) => `${r.method} ${r.path} ${r.turn}`),
    ['POST /v1/messages null', 'POST /v1/messages/count_tokens null', 'HEAD / null', 'GET /v1/models null', 'POST /v1/messages 0', 'POST /v1/messages null', 'POST /v1/messages null', 'POST /v1/complete null'],
  );
  await m.close();
  await m.close();
});

// SSE `data:` lines as parsed JSON (the Gemini and OpenAI streams have no event names), up to [DONE].
const dataOf = (text: string) =>
  text
    .split(/\r?\n\r?\n/)
    .filter(Boolean)
    .map((block) => block.replace(/^data: /, ''))
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data));

test('the Gemini API: a streamed function call in chunks, the last with finishReason and usage; the function response sent back is read; a JSON side request gets its schema\'s smallest value; past the script a 400 INVALID_ARGUMENT', async (t) => {
  const m = await startGeminiServer(t, [{ text: 'Running it.', tool_use: { name: 'run_shell_command', input: { command: 'touch ran.txt' } } }, { text: 'Done.' }]);
  const tools = [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: { type: 'object' } }] }];
  const user = { role: 'user', parts: [{ text: 'go' }] };
  const first = await post(`${m.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`, { contents: [user], tools });
  assert.equal(first.status, 200);
  assert.equal(first.type, 'text/event-stream');
  const chunks = dataOf(first.text);
  assert.deepEqual(chunks.map((c) => c.candidates[0].content.parts), [[{ text: 'Running it.' }], [{ functionCall: { name: 'run_shell_command', args: { command: 'touch ran.txt' } } }]]);
  assert.deepEqual(chunks.map((c) => [c.candidates[0].finishReason, c.usageMetadata?.totalTokenCount > 0]), [[undefined, false], ['STOP', true]]);
  assert.equal(chunks[0].candidates[0].content.role, 'model');
  assert.equal(chunks[0].modelVersion, 'gemini-x');

  const back = [user, { role: 'model', parts: chunks.flatMap((c) => c.candidates[0].content.parts) }, { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'Output: (empty)' } } }] }];
  const second = await post(`${m.url}/v1beta/models/gemini-x:generateContent`, { contents: back, tools });
  assert.deepEqual(JSON.parse(second.text).candidates[0], { content: { role: 'model', parts: [{ text: 'Done.' }] }, index: 0, finishReason: 'STOP' });
  assert.deepEqual(functionResponses(m.turns()[1]!), [{ name: 'run_shell_command', response: { output: 'Output: (empty)' } }]);
  assert.deepEqual(geminiFunctionNames(m.turns()[0]!), ['run_shell_command']);

  // A router's request for JSON: not a turn; required fields only, an enum's first value.
  const schema = { type: 'OBJECT', properties: { reasoning: { type: 'STRING' }, score: { type: 'INTEGER' }, next: { type: 'STRING', enum: ['user', 'model'] }, extra: { type: 'STRING' } }, required: ['reasoning', 'score', 'next'] };
  const side = await post(`${m.url}/v1beta/models/flash:generateContent`, { contents: [user], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } });
  assert.deepEqual(JSON.parse(JSON.parse(side.text).candidates[0].content.parts[0].text), { reasoning: 'scripted', score: 1, next: 'user' });
  const counted = await post(`${m.url}/v1beta/models/gemini-x:countTokens`, { contents: [user] });
  assert.ok(JSON.parse(counted.text).totalTokens > 0);

  const past = await post(`${m.url}/v1beta/models/gemini-x:generateContent`, { contents: [user], tools });
  assert.equal(past.status, 400);
  assert.deepEqual(JSON.parse(past.text).error, { code: 400, status: 'INVALID_ARGUMENT', message: 'the script has 2 turns; request 3 of the loop has none' });
  assert.equal((await post(`${m.url}/v1beta/models/gemini-x:embedContent`, {})).status, 404);
  assert.deepEqual(m.requests.map((r) => r.turn), [0, 1, null, null, null, null]);
});

test('OpenAI Chat Completions: a streamed tool call (id and name, then the arguments in pieces), finish_reason tool_calls, the usage chunk, [DONE]; the tool message sent back is read; a side request without tools; past the script a 400', async (t) => {
  const m = await startOpenAIServer(t, [{ tool_use: { name: 'bash', input: { command: 'touch ran.txt', description: 'Create it' } } }, { text: 'Done.' }], { side: () => 'A title' });
  const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }];
  const user = { role: 'user', content: 'go' };
  const first = await post(`${m.url}/v1/chat/completions`, { model: 'm', messages: [user], tools, stream: true, stream_options: { include_usage: true } });
  assert.equal(first.type, 'text/event-stream');
  assert.ok(first.text.endsWith('data: [DONE]\n\n'));
  const chunks = dataOf(first.text);
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'm'));
  const deltas = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0]);
  const calls = deltas.flatMap((d) => d.delta.tool_calls ?? []);
  assert.equal(calls[0].type, 'function');
  assert.match(calls[0].id, /^call_/);
  assert.equal(calls[0].function.name, 'bash');
  assert.equal(calls.length, 2, 'the arguments in two pieces');
  assert.equal(calls[1].id, undefined);
  assert.deepEqual(JSON.parse(calls.map((c) => c.function.arguments).join('')), { command: 'touch ran.txt', description: 'Create it' });
  assert.equal(deltas.at(-1).finish_reason, 'tool_calls');
  assert.ok(chunks.at(-1).usage.total_tokens > 0, 'the usage in a last chunk of no choices');
  assert.deepEqual(chunks.at(-1).choices, []);

  const back = [user, { role: 'assistant', content: null, tool_calls: [{ id: calls[0].id, type: 'function', function: { name: 'bash', arguments: '{}' } }] }, { role: 'tool', tool_call_id: calls[0].id, content: '(no output)' }];
  const second = JSON.parse((await post(`${m.url}/v1/chat/completions`, { model: 'm', messages: back, tools })).text);
  assert.equal(second.object, 'chat.completion');
  assert.deepEqual(second.choices, [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }]);
  assert.deepEqual(toolMessages(m.turns()[1]!), [{ tool_call_id: calls[0].id, text: '(no output)' }]);
  assert.deepEqual(openaiFunctionNames(m.turns()[0]!), ['bash']);

  const title = JSON.parse((await post(`${m.url}/v1/chat/completions`, { model: 'small', messages: [user] })).text);
  assert.equal(title.choices[0].message.content, 'A title');
  const past = await post(`${m.url}/v1/chat/completions`, { model: 'm', messages: [user], tools });
  assert.equal(past.status, 400);
  assert.deepEqual(JSON.parse(past.text).error.message, 'the script has 2 turns; request 3 of the loop has none');
  assert.equal((await post(`${m.url}/v1/responses`, {})).status, 404);
  assert.equal(((await (await request(`${m.url}/v1/models`)).body.json()) as any).data[0].id, 'scripted');
  assert.deepEqual(m.requests.map((r) => r.turn), [0, 1, null, null, null, null]);
});
