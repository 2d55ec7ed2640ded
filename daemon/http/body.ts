import type { IncomingMessage } from 'node:http';
import { GroveError } from '../errors.ts';

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

// Requests whose body is already being read or dropped by us.
const draining = new WeakSet<IncomingMessage>();

// Past this, a body being drained after an early answer is cut off instead of read.
const DRAIN_LIMIT = 8 * MAX_BODY_BYTES;

// Reads at most MAX_BODY_BYTES and parses them as UTF-8 JSON.
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const buf = await collect(req, true);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new GroveError('INVALID_JSON', 'the request body is not valid UTF-8');
  }
  if (text.trim() === '') throw new GroveError('INVALID_JSON', 'the request body is empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    // Deep nesting can overflow the parser's stack: still the client's malformed input.
    const why = err instanceof SyntaxError ? err.message : 'nesting is too deep';
    throw new GroveError('INVALID_JSON', `the request body is not valid JSON: ${why}`);
  }
}

// Reads and discards a body the endpoint does not use, still bounded by the size limit.
export async function discardBody(req: IncomingMessage): Promise<void> {
  await collect(req, false);
}

// Reads the body with events rather than for-await: leaving a for-await loop destroys the
// socket, and a reset can make the client lose the 413 it was sent. An oversized body is
// refused at once and the rest is drained (up to DRAIN_LIMIT) so the answer arrives intact.
function collect(req: IncomingMessage, keep: boolean): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  draining.add(req);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (over) {
        if (size > DRAIN_LIMIT) req.socket.destroy();
        return;
      }
      if (size > MAX_BODY_BYTES) {
        over = true;
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      if (keep) chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

// After an answer sent before the body was read: read and drop the rest, within bounds, so
// the connection closes cleanly (or stays usable) instead of being reset under the answer.
export function drainUnread(req: IncomingMessage): { close: boolean } {
  if (req.complete || draining.has(req)) return { close: false };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > DRAIN_LIMIT) return { close: true };
  draining.add(req);
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > DRAIN_LIMIT) req.socket.destroy();
  });
  req.resume();
  return { close: false };
}

function tooLarge(): GroveError {
  return new GroveError('PAYLOAD_TOO_LARGE', `request bodies are limited to ${MAX_BODY_BYTES} bytes`);
}
