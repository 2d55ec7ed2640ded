// A scripted Anthropic Messages API on 127.0.0.1 (a free port), for driving a real agent CLI
// (Claude Code through ANTHROPIC_BASE_URL) without a model: each request of the agent's own
// loop gets the script's next turn, as the real API answers (SSE when `stream`, JSON otherwise),
// and every request is recorded so that a test can read what the CLI sent back (tool results,
// denial messages, the tools it offered).
import type { ServerResponse } from 'node:http';
import type { Cleanup } from './daemon.ts';
import { halves, type RecordedRequest, type ScriptedServer, sendJson, sendSse, startScriptedServer, tokens, type Turn } from './scripted-server.ts';

export type { RecordedRequest, Turn } from './scripted-server.ts';

/** `url` is for ANTHROPIC_BASE_URL; `turns()` are the /v1/messages requests answered with a turn. */
export type ModelServer = ScriptedServer;

export interface ModelServerOptions {
  /** whether a /v1/messages request is the agent's own loop (gets the next turn); default: it offers tools */
  isTurn?: (body: any) => boolean;
  /** the text a side request gets (a title, a summary, a check the CLI makes with a small model) */
  side?: (body: any) => string;
}

// The environment that points Claude Code at `url` with a dummy key, and turns off what would
// reach the network besides the model (telemetry, error reports, the auto-updater).
export function claudeModelEnv(url: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

const MODEL_FALLBACK = 'claude-scripted';

// A text block's and a tool_use block's content, as the API puts them in a message.
function contentOf(turn: Turn, toolId: string): any[] {
  if ('tool_use' in turn) {
    const blocks: any[] = turn.text ? [{ type: 'text', text: turn.text }] : [];
    return [...blocks, { type: 'tool_use', id: toolId, name: turn.tool_use.name, input: turn.tool_use.input }];
  }
  return [{ type: 'text', text: turn.text }];
}

function message(id: string, model: string, content: any[], stopReason: string) {
  const outputTokens = tokens(content);
  return { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 10, output_tokens: outputTokens } };
}

// The SSE the real API streams for a message: message_start, each block's start, delta(s) and
// stop (a tool's input as input_json_delta pieces), message_delta with the stop reason, message_stop.
function sseOf(msg: ReturnType<typeof message>): string {
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = ev('message_start', { message: { ...msg, content: [], stop_reason: null, usage: { input_tokens: msg.usage.input_tokens, output_tokens: 1 } } });
  out += ev('ping', {});
  msg.content.forEach((block, index) => {
    if (block.type === 'text') {
      out += ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      out += ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      out += ev('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const partial_json of halves(JSON.stringify(block.input))) out += ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
    }
    out += ev('content_block_stop', { index });
  });
  out += ev('message_delta', { delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: msg.usage.output_tokens } });
  out += ev('message_stop', {});
  return out;
}

const requestId = () => ({ 'request-id': `req_${Date.now()}` });

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } }, requestId());
}

// Starts a server that answers the loop's requests with `script`, in order; closed after `t`.
// A loop request past the script's end is answered 400 (an invalid_request_error naming it).
export async function startModelServer(t: Cleanup, script: Turn[], opts: ModelServerOptions = {}): Promise<ModelServer> {
  const isTurn = opts.isTurn ?? ((body: any) => Array.isArray(body?.tools) && body.tools.length > 0);
  const side = opts.side ?? (() => 'ok');
  return startScriptedServer(t, script, (rec, res: ServerResponse, loop) => {
    const { body } = rec;
    if (rec.method === 'GET' && rec.path === '/v1/models') {
      return sendJson(res, 200, { data: [{ type: 'model', id: MODEL_FALLBACK, display_name: 'Scripted', created_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: MODEL_FALLBACK, last_id: MODEL_FALLBACK }, requestId());
    }
    if (rec.method === 'POST' && rec.path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: tokens(body) }, requestId());
    if (rec.method !== 'POST' || rec.path !== '/v1/messages') return apiError(res, 404, 'not_found_error', `the scripted model server has no ${rec.method} ${rec.path}`);
    if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) return apiError(res, 400, 'invalid_request_error', 'messages: an array is required');

    let content: any[];
    let stopReason = 'end_turn';
    if (isTurn(body)) {
      const turn = loop.take();
      if (!turn) return apiError(res, 400, 'invalid_request_error', loop.exhausted());
      content = contentOf(turn, loop.id('toolu_scripted_'));
      if ('tool_use' in turn) stopReason = 'tool_use';
    } else {
      content = [{ type: 'text', text: side(body) }];
    }
    const msg = message(loop.id('msg_scripted_'), typeof body.model === 'string' ? body.model : MODEL_FALLBACK, content, stopReason);
    if (body.stream !== true) return sendJson(res, 200, msg, requestId());
    sendSse(res, sseOf(msg), requestId());
  });
}

// The tool_result blocks of a request's last user message (what the CLI sent back for the
// previous turn's tool call), with their content as one text.
export function toolResults(req: RecordedRequest): Array<{ tool_use_id: string; is_error: boolean; text: string }> {
  const last = [...(req.body?.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  const blocks = Array.isArray(last?.content) ? last.content : [];
  return blocks
    .filter((b: any) => b.type === 'tool_result')
    .map((b: any) => ({
      tool_use_id: b.tool_use_id,
      is_error: b.is_error === true,
      text: typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: any) => c.text ?? '').join(''),
    }));
}

// The names of the tools a request offered the model.
export function toolNames(req: RecordedRequest): string[] {
  return (req.body?.tools ?? []).map((tool: any) => tool.name);
}
