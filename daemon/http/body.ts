import type { IncomingMessage } from 'node:http';
import { GroveError } from './errors.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

// True when the request carries a body at all (length > 0 or chunked).
export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  if (len !== undefined) return Number(len) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

// Only `application/json` (optionally `; charset=utf-8`): this also stops form and text/plain posts.
export function assertJsonContentType(req: IncomingMessage): void {
  const raw = req.headers['content-type'];
  const [type, ...params] = (raw ?? '').split(';').map((s) => s.trim().toLowerCase());
  const charsetOk = params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
  if (type !== 'application/json' || !charsetOk) {
    throw new GroveError(
      'UNSUPPORTED_MEDIA_TYPE',
      raw ? `Content-Type ${JSON.stringify(raw)} is not accepted; send application/json` : 'a request body needs Content-Type: application/json',
    );
  }
}

// Reads at most MAX_BODY_BYTES and parses them as UTF-8 JSON.
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new GroveError('INVALID_JSON', 'the request body is not valid UTF-8');
  }
  if (text.trim() === '') throw new GroveError('INVALID_JSON', 'the request body is empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    // Deep nesting overflows the parser's stack: still the client's malformed input.
    const why = err instanceof SyntaxError ? err.message : 'nesting is too deep';
    throw new GroveError('INVALID_JSON', `the request body is not valid JSON: ${why}`);
  }
}

// Reads and discards a body the endpoint does not use, still bounded by the size limit.
export async function discardBody(req: IncomingMessage): Promise<void> {
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
  }
}

function tooLarge(): GroveError {
  return new GroveError('PAYLOAD_TOO_LARGE', `request bodies are limited to ${MAX_BODY_BYTES} bytes`);
}
