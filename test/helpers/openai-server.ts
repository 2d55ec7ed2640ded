// A scripted OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed or not, tool
// calls as `tool_calls`) on 127.0.0.1, for driving the real CLIs that take an OpenAI-compatible
// endpoint without a model: Qwen Code, OpenCode, GitHub Copilot CLI (test/helpers/
// scripted-server.ts is the part every protocol shares). A request offering tools is the agent's
// loop and gets the script's next turn; the others (a title, a summary) are side requests.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import type { Cleanup } from './daemon.ts';
import { halves, type RecordedRequest, type ScriptedServer, sendJson, sendSse, startScriptedServer, tokens, type Turn } from './scripted-server.ts';

export const OPENAI_MODEL = 'scripted';

// Qwen Code against `url` (its OpenAI auth, selected by the key).
export function qwenModelEnv(url: string): Record<string, string> {
  return { OPENAI_API_KEY: 'grove-test-dummy-key', OPENAI_BASE_URL: `${url}/v1`, OPENAI_MODEL };
}

// GitHub Copilot CLI against `url` as its own provider (BYOK): offline, no GitHub account.
export function copilotModelEnv(url: string): Record<string, string> {
  return { COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `${url}/v1`, COPILOT_PROVIDER_TYPE: 'openai', COPILOT_MODEL: OPENAI_MODEL };
}

// OpenCode of `home` against `url`: a provider of its own (the AI SDK's OpenAI-compatible one) as
// the default model in its user config (the built-in's OPENCODE_CONFIG_CONTENT, its agents, is
// merged over it), without the model list it would fetch.
export function opencodeModelEnv(url: string, home: string): Record<string, string> {
  const provider = { scripted: { npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: { baseURL: `${url}/v1`, apiKey: 'grove-test-dummy-key' }, models: { [OPENAI_MODEL]: { name: 'Scripted', tool_call: true } } } };
  mkdirSync(path.join(home, '.config', 'opencode'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'opencode', 'opencode.json'), JSON.stringify({ provider, model: `scripted/${OPENAI_MODEL}` }));
  return { HOME: home, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' };
}

function openaiError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

export interface OpenAIServerOptions {
  /** the text a side request gets; default "ok" */
  side?: (body: any) => string;
}

// Starts the server; the loop's requests get `script` in order. Past the script's end a loop
// request is answered 400 (an invalid_request_error naming it).
export async function startOpenAIServer(t: Cleanup, script: Turn[], opts: OpenAIServerOptions = {}): Promise<ScriptedServer> {
  return startScriptedServer(t, script, (rec, res, loop) => {
    const { body } = rec;
    if (rec.method === 'GET' && rec.path === '/v1/models') return sendJson(res, 200, { object: 'list', data: [{ id: OPENAI_MODEL, object: 'model', created: 1767225600, owned_by: 'grove-test' }] });
    if (rec.method !== 'POST' || rec.path !== '/v1/chat/completions') return openaiError(res, 404, 'not_found_error', `the scripted OpenAI server has no ${rec.method} ${rec.path}`);
    if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) return openaiError(res, 400, 'invalid_request_error', 'messages: an array is required');

    let text: string | null;
    let call: { id: string; type: 'function'; function: { name: string; arguments: string } } | null = null;
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      const turn = loop.take();
      if (!turn) return openaiError(res, 400, 'invalid_request_error', loop.exhausted());
      text = turn.text ?? null;
      if ('tool_use' in turn) call = { id: loop.id('call_scripted_'), type: 'function', function: { name: turn.tool_use.name, arguments: JSON.stringify(turn.tool_use.input) } };
    } else {
      text = opts.side?.(body) ?? 'ok';
    }
    const finish = call ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: tokens(body.messages), completion_tokens: tokens([text, call]), total_tokens: tokens(body.messages) + tokens([text, call]) };
    const head = { id: loop.id('chatcmpl-scripted-'), created: Math.floor(Date.now() / 1000), model: typeof body.model === 'string' ? body.model : OPENAI_MODEL };
    if (body.stream !== true) {
      const message = { role: 'assistant', content: text, ...(call ? { tool_calls: [call] } : {}) };
      return sendJson(res, 200, { ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage });
    }
    // Streamed as the API does: the role, the text, the call's id and name then its arguments in
    // pieces, the finish reason, the usage (when asked for) in a chunk of no choices, [DONE].
    const chunk = (delta: object | null, finish_reason: string | null = null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: delta ? [{ index: 0, delta, finish_reason }] : [], ...(delta ? {} : { usage }) })}\n\n`;
    let out = chunk({ role: 'assistant', content: '' });
    if (text) out += chunk({ content: text });
    if (call) {
      const [first, second] = halves(call.function.arguments);
      out += chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: first } }] });
      out += chunk({ tool_calls: [{ index: 0, function: { arguments: second } }] });
    }
    out += chunk({}, finish);
    if (body.stream_options?.include_usage) out += chunk(null);
    sendSse(res, `${out}data: [DONE]\n\n`);
  });
}

// The tool messages after a request's last assistant message (what the CLI sent back for the
// previous turn's calls), with their content as one text.
export function toolMessages(req: RecordedRequest): Array<{ tool_call_id: string; text: string }> {
  const messages: any[] = req.body?.messages ?? [];
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => ({ tool_call_id: m.tool_call_id, text: typeof m.content === 'string' ? m.content : (m.content ?? []).map((c: any) => c.text ?? '').join('') }));
}

// The prompt a request sent: the last text of its last user message, but for the parts of context
// a CLI puts after it (Qwen Code 0.24's `<system-reminder>`s). A message may hold several prompts:
// Qwen Code joins a prompt the model never answered with the next one.
export function promptOf(req: RecordedRequest): string | undefined {
  const user = (req.body?.messages ?? []).filter((m: any) => m.role === 'user').at(-1);
  if (typeof user?.content === 'string') return user.content;
  return (user?.content ?? []).filter((c: any) => typeof c.text === 'string' && !c.text.startsWith('<system-reminder>')).at(-1)?.text;
}

// The names of the functions a request offered the model.
export function functionNames(req: RecordedRequest): string[] {
  return (req.body?.tools ?? []).map((tool: any) => tool.function?.name);
}
