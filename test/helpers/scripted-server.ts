// What every scripted model server of the real agent tests shares, whatever API it speaks
// (Anthropic Messages, Gemini, OpenAI Chat Completions, OpenAI Responses): an HTTP server on 127.0.0.1 (a free
// port) that records every request, hands the agent's own loop the script's next turn, and is
// closed after the test. Each protocol module says which requests are the loop and how a turn
// is written on its wire.
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

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** every request, in arrival order */
  requests: RecordedRequest[];
  /** the requests of the agent's loop that were answered with a turn of the script, in order */
  turns(): RecordedRequest[];
  close(): Promise<void>;
}

/** What a protocol's handler gets for one request besides the request itself. */
export interface Loop<T = Turn> {
  /** the script's next turn, marking the request as answered with it; undefined past the end */
  take(): T | undefined;
  /** why there is no turn, for the protocol's error past the script's end */
  exhausted(): string;
  /** a fresh id for a message or a tool call (`<prefix>0001`, …), unique on this server */
  id(prefix: string): string;
}

/** Answers one recorded request on `res`, in the protocol's own wire format. A protocol whose
 * turns say more than `Turn` (Codex's freeform tool calls, an HTTP error) has a turn type of its own. */
export type Protocol<T = Turn> = (rec: RecordedRequest, res: ServerResponse, loop: Loop<T>) => void;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers }).end(text);
}

export function sendSse(res: ServerResponse, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers }).end(text);
}

// A tool call's input in two pieces, as the APIs stream partial JSON that only parses once joined.
export function halves(json: string): [string, string] {
  const cut = Math.floor(json.length / 2);
  return [json.slice(0, cut), json.slice(cut)];
}

// A rough token count for the usage every API reports.
export function tokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}

// Starts a server that answers with `protocol`, the loop's requests getting `script` in order;
// closed after `t`. Past the script's end the protocol answers an error naming it, so that a test
// which scripted too little fails on what the CLI prints instead of hanging on retries.
export async function startScriptedServer<T = Turn>(t: Cleanup, script: T[], protocol: Protocol<T>): Promise<ScriptedServer> {
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
    protocol(rec, res, {
      take: () => {
        if (next >= script.length) return undefined;
        rec.turn = next;
        return script[next++];
      },
      exhausted: () => `the script has ${script.length} turns; request ${next + 1} of the loop has none`,
      id: (prefix) => `${prefix}${String(++ids).padStart(4, '0')}`,
    });
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
