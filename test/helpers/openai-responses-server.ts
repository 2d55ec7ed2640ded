// A scripted OpenAI Responses API on 127.0.0.1 (a free port), for driving the real Codex CLI
// (through a model provider whose base_url is this server) without a model (test/helpers/
// scripted-server.ts is the part every protocol shares): each POST /v1/responses gets the script's
// next turn as the real API streams it (SSE: response.created, each output item added and done,
// response.completed with usage), and every request is recorded so that a test can read what
// Codex sent back (a command's output, a refusal).
import type { ServerResponse } from 'node:http';
import type { Cleanup } from './daemon.ts';
import { type RecordedRequest, type ScriptedServer, sendJson, sendSse, startScriptedServer, tokens } from './scripted-server.ts';

/** One answer of the model: text, a function call (Codex's shell tool) with its arguments, a
 * custom (freeform) tool call with its input (Codex's apply_patch), or an HTTP error. */
export type ResponsesTurn =
  | { text: string }
  | { call: { name: string; arguments: Record<string, unknown> }; text?: string }
  | { custom: { name: string; input: string }; text?: string }
  | { fail: { status: number; body: object } };

// The output items of a turn, as the API puts them in a response.
function itemsOf(turn: Exclude<ResponsesTurn, { fail: unknown }>, id: (prefix: string) => string): any[] {
  const message = (text: string) => ({ type: 'message', id: id('msg'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
  const before = turn.text ? [message(turn.text)] : [];
  if ('call' in turn) return [...before, { type: 'function_call', id: id('fc'), status: 'completed', call_id: id('call'), name: turn.call.name, arguments: JSON.stringify(turn.call.arguments) }];
  if ('custom' in turn) return [...before, { type: 'custom_tool_call', id: id('ctc'), status: 'completed', call_id: id('call'), name: turn.custom.name, input: turn.custom.input }];
  return before;
}

// The SSE the API streams for a response: created, in_progress, each item added (a message's
// text as one delta) and done, then completed with the whole response and its usage.
function sseOf(response: any): string {
  let seq = 0;
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const pending = { ...response, status: 'in_progress', output: [], usage: null };
  let out = ev('response.created', { response: pending }) + ev('response.in_progress', { response: pending });
  response.output.forEach((item: any, output_index: number) => {
    const empty = item.type === 'message' ? { ...item, content: [] } : item.type === 'function_call' ? { ...item, arguments: '' } : { ...item, input: '' };
    out += ev('response.output_item.added', { output_index, item: { ...empty, status: 'in_progress' } });
    if (item.type === 'message') {
      out += ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: item.content[0].text });
    } else if (item.type === 'function_call') {
      out += ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: item.arguments });
      out += ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments });
    } else {
      out += ev('response.custom_tool_call_input.delta', { item_id: item.id, output_index, delta: item.input });
      out += ev('response.custom_tool_call_input.done', { item_id: item.id, output_index, input: item.input });
    }
    out += ev('response.output_item.done', { output_index, item });
  });
  return out + ev('response.completed', { response });
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { type, message } });
}

export interface ResponsesServerOptions {
  /** the text a side request gets (not a turn of the script), if it is one: a title Codex's
   * interface asks for (`codexTitle`) */
  side?: (body: any) => string | null;
}

// Codex's interface (0.171.0) asks the model for a title of the thread beside its first turn: a
// side request, answered with `title`.
export const codexTitle =
  (title: string) =>
  (body: any): string | null => {
    const last = [...(body.input ?? [])].reverse().find((i: any) => i.type === 'message' && i.role === 'user');
    const text = (last?.content ?? []).map((c: any) => c.text ?? '').join('');
    return text.startsWith('Generate a concise, single-line task title') ? title : null;
  };

// Starts a server that answers /v1/responses with `script`, in order; closed after `t`. A request
// past the script's end is answered 400 naming it, so a test that scripted too little fails on
// what the CLI prints instead of hanging on its retries.
export async function startResponsesServer(t: Cleanup, script: ResponsesTurn[], opts: ResponsesServerOptions = {}): Promise<ScriptedServer> {
  return startScriptedServer(t, script, (rec, res, loop) => {
    const { body } = rec;
    if (rec.method === 'GET' && rec.path === '/v1/models') return sendJson(res, 200, { object: 'list', data: [] });
    if (rec.method !== 'POST' || rec.path !== '/v1/responses') return apiError(res, 404, 'not_found', `the scripted server has no ${rec.method} ${rec.path}`);
    if (typeof body !== 'object' || body === null || !Array.isArray(body.input)) return apiError(res, 400, 'invalid_request_error', 'input: an array is required');
    const side = opts.side?.(body) ?? null;
    const turn = side !== null ? { text: side } : loop.take();
    if (!turn) return apiError(res, 400, 'invalid_request_error', loop.exhausted());
    if ('fail' in turn) return sendJson(res, turn.fail.status, turn.fail.body);
    const id = (prefix: string) => loop.id(`${prefix}_scripted_`);
    const output = itemsOf(turn, id);
    const outputTokens = tokens(output);
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10 + outputTokens };
    const response = { id: id('resp'), object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: typeof body.model === 'string' ? body.model : 'scripted', output, usage };
    if (body.stream !== true) return sendJson(res, 200, response);
    sendSse(res, sseOf(response));
  });
}

// What Codex sent back for the previous turn's calls: the function_call_output items of a
// request's input, by call id, with their output as text.
export function callOutputs(req: RecordedRequest): Array<{ call_id: string; output: string }> {
  return (req.body?.input ?? [])
    .filter((item: any) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .map((item: any) => ({ call_id: item.call_id, output: typeof item.output === 'string' ? item.output : JSON.stringify(item.output) }));
}

// The function calls of a request's input (what the model asked for so far), in order.
export function calls(req: RecordedRequest): Array<{ call_id: string; name: string; arguments: string }> {
  return (req.body?.input ?? []).filter((item: any) => item.type === 'function_call').map((item: any) => ({ call_id: item.call_id, name: item.name, arguments: item.arguments }));
}

// The config.toml that points Codex at the scripted server at `url` as its model provider, with no auth and no network
// besides the model (no update check, no analytics).
export function codexConfig(url: string): string {
  return [
    // A model Codex knows: it offers its current tools (apply_patch among them) and warns of nothing.
    'model = "gpt-5.5"',
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '[analytics]',
    'enabled = false',
    '[model_providers.scripted]',
    'name = "scripted"',
    `base_url = ${JSON.stringify(`${url}/v1`)}`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    // The sandbox's writable roots are the worktree only, not /tmp where the tests' folders are.
    '[sandbox_workspace_write]',
    'exclude_slash_tmp = true',
    'exclude_tmpdir_env_var = true',
    '',
  ].join('\n');
}
