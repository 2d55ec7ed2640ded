// A scripted Anthropic Messages API on 127.0.0.1 (a free port), for driving a real agent CLI
// (Claude Code through ANTHROPIC_BASE_URL) without a model: each request of the agent's own
// loop gets the script's next turn, as the real API answers (SSE when `stream`, JSON otherwise),
// and every request is recorded so that a test can read what the CLI sent back (tool results,
// denial messages, the tools it offered).
import { once as onceEvent } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from '../../daemon/runtime/once.ts';
import type { Cleanup } from './daemon.ts';

/** One answer of the model: text, or a tool call (with some text before it, if given). */
export type Turn = { text: string } | { tool_use: { name: string; input: Record<string, unknown> }; text?: string };

export interface RecordedRequest {
  method: string;
  /** the path without the query (`/v1/messages`) */
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  /** the parsed JSON body, or the raw text when it was not JSON */
  body: any;
  /** the index in the script of the turn it was answered with; null for a side request */
  turn: number | null;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>`, for ANTHROPIC_BASE_URL */
  url: string;
  /** every request, in arrival order */
  requests: RecordedRequest[];
  /** the /v1/messages requests that were answered with a turn of the script, in order */
  turns(): RecordedRequest[];
  close(): Promise<void>;
}

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
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(content).length / 4));
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
      // The input in two pieces, as the API sends partial JSON that only parses once joined.
      const json = JSON.stringify(block.input);
      const cut = Math.floor(json.length / 2);
      for (const partial_json of [json.slice(0, cut), json.slice(cut)]) out += ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
    }
    out += ev('content_block_stop', { index });
  });
  out += ev('message_delta', { delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: msg.usage.output_tokens } });
  out += ev('message_stop', {});
  return out;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': `req_${Date.now()}` }).end(text);
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } });
}

// Starts a server that answers the loop's requests with `script`, in order; closed after `t`.
// A loop request past the script's end is answered 400 (an invalid_request_error naming it), so
// that a test which scripted too little fails on what the CLI prints instead of hanging on retries.
export async function startModelServer(t: Cleanup, script: Turn[], opts: ModelServerOptions = {}): Promise<ModelServer> {
  const isTurn = opts.isTurn ?? ((body: any) => Array.isArray(body?.tools) && body.tools.length > 0);
  const side = opts.side ?? (() => 'ok');
  const requests: RecordedRequest[] = [];
  let next = 0;
  let ids = 0;

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: any = raw;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      // not JSON: recorded as text
    }
    const rec: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.search, headers: req.headers, body, turn: null };
    requests.push(rec);
    if (rec.method === 'HEAD' || (rec.method === 'GET' && rec.path === '/')) return void res.writeHead(200).end();
    if (rec.method === 'GET' && rec.path === '/v1/models') {
      return sendJson(res, 200, { data: [{ type: 'model', id: MODEL_FALLBACK, display_name: 'Scripted', created_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: MODEL_FALLBACK, last_id: MODEL_FALLBACK });
    }
    if (rec.method === 'POST' && rec.path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    if (rec.method !== 'POST' || rec.path !== '/v1/messages') return apiError(res, 404, 'not_found_error', `the scripted model server has no ${rec.method} ${rec.path}`);
    if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) return apiError(res, 400, 'invalid_request_error', 'messages: an array is required');

    let content: any[];
    let stopReason = 'end_turn';
    if (isTurn(body)) {
      if (next >= script.length) return apiError(res, 400, 'invalid_request_error', `the script has ${script.length} turns; request ${next + 1} of the loop has none`);
      rec.turn = next;
      const turn = script[next++]!;
      content = contentOf(turn, `toolu_scripted_${String(++ids).padStart(4, '0')}`);
      if ('tool_use' in turn) stopReason = 'tool_use';
    } else {
      content = [{ type: 'text', text: side(body) }];
    }
    const msg = message(`msg_scripted_${String(++ids).padStart(4, '0')}`, typeof body.model === 'string' ? body.model : MODEL_FALLBACK, content, stopReason);
    if (body.stream !== true) return sendJson(res, 200, msg);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${Date.now()}` }).end(sseOf(msg));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.listen({ host: '127.0.0.1', port: 0 });
  await onceEvent(server, 'listening');
  const close = once(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  t.after(close);
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    turns: () => requests.filter((r) => r.turn !== null),
    close,
  };
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
