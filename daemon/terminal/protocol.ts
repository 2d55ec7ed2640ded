import { createAjv, compile } from '../runtime/validation.ts';
import { AttachLine, ClientFrame, MAX_INPUT_BYTES } from '../../schemas/terminal.ts';

// WebSocket close codes (RFC 6455 §7.4.1) for a client frame that is refused: the connection
// closes with the code and a reason; the session goes on.
export const CLOSE = {
  /** not JSON, or a frame whose fields are wrong (a resize of 0 or over 1000) */
  INVALID: 1007,
  /** a frame of an unknown type */
  UNSUPPORTED: 1003,
  /** an input over 1 MiB */
  TOO_BIG: 1009,
  /** the session ended: its exit frame was sent */
  NORMAL: 1000,
  /** the daemon is stopping, the client reads too slowly, or its link to the holder ended before
   * an exit frame (cut, or the holder gone): reconnect with ?offset= */
  GOING_AWAY: 1001,
} as const;

const ajv = createAjv();
const isClientFrame = compile(ajv, ClientFrame);
const isAttachLine = compile(ajv, AttachLine);

export type Parsed = { ok: true; frame: ClientFrame } | { ok: false; close: number; reason: string };

// A client's frame, checked: what to do with it, or the close code and reason that refuse it.
export function parseClientFrame(text: string): Parsed {
  // Counted before parsing: JSON escapes make the text longer than the bytes it carries, never shorter by much.
  if (Buffer.byteLength(text) > MAX_INPUT_BYTES * 6 + 1024) return { ok: false, close: CLOSE.TOO_BIG, reason: 'frame over 1 MiB of input' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, close: CLOSE.INVALID, reason: 'frame is not JSON' };
  }
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (type !== 'input' && type !== 'resize') return { ok: false, close: CLOSE.UNSUPPORTED, reason: `unknown frame type ${JSON.stringify(type ?? null).slice(0, 40)}` };
  if (!isClientFrame(value)) {
    const issue = isClientFrame.issues()[0];
    return { ok: false, close: CLOSE.INVALID, reason: `${type} frame: ${issue ? `${issue.path} ${issue.message}` : 'invalid'}`.slice(0, 120) };
  }
  if (value.type === 'input' && Buffer.byteLength(value.data) > MAX_INPUT_BYTES) return { ok: false, close: CLOSE.TOO_BIG, reason: 'input over 1 MiB' };
  return { ok: true, frame: value };
}

// The first line of a client on the holder's socket, checked; null when it is not an attach line.
export function parseAttachLine(text: string): AttachLine | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return isAttachLine(value) && (value.offset === null || Number.isSafeInteger(value.offset)) ? value : null;
}
