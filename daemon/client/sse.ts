// The one reader of server-sent events (the daemon's /api/events, session output and task setup,
// DESIGN §8) for every client: the CLI, `grove mcp`, tests and bench. Per the SSE spec: lines end in
// CRLF, LF or CR; a comment (keepalive) is skipped; data lines join with "\n"; an event with no
// data is not dispatched; the event type defaults to "message".
export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

// Each event of a body (undici's, or node's IncomingMessage: both iterate chunks), as text.
export async function* sseMessages(body: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<SseMessage> {
  // A stream decoder: a UTF-8 character split between two chunks is decoded whole.
  const decoder = new TextDecoder();
  let buf = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  // A CR at the end of the buffer may be the first half of a CRLF: it waits for the next chunk.
  const lines = function* (final: boolean): Generator<string> {
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      if (!m || (m[0] === '\r' && m.index === buf.length - 1 && !final)) return;
      yield buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
    }
  };
  const take = function* (line: string): Generator<SseMessage> {
    if (line === '') {
      if (data.length > 0) yield { ...(id === undefined ? {} : { id }), event: event || 'message', data: data.join('\n') };
      event = '';
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
  };
  for await (const chunk of body) {
    buf += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    for (const line of lines(false)) yield* take(line);
  }
  buf += decoder.decode();
  for (const line of lines(true)) yield* take(line);
}

export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

// The daemon's events, whose data is always one JSON document.
export async function* sse(body: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<SseEvent> {
  for await (const m of sseMessages(body)) yield { ...m, data: JSON.parse(m.data) };
}

// Reads a stream to its `end` event (a session's output, a task's setup): that event's data, or
// null where the stream closed without one.
export async function sseEnd(body: AsyncIterable<Buffer | Uint8Array | string>): Promise<any> {
  for await (const { event, data } of sse(body)) if (event === 'end') return data;
  return null;
}
