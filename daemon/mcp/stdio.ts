// The MCP stdio transport of `grove mcp`: JSON-RPC messages one per line on stdin and stdout, as
// the SDK's StdioServerTransport, but a line longer than `maxLine` is skipped up to its newline
// and answered with an error, where the SDK's closes the transport and the server exits.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { once } from '../runtime/once.ts';

// The SDK's own bound for a message.
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private chunks: Buffer[] = [];
  private size = 0;
  // True from a line found too long to its newline: what comes meanwhile is dropped.
  private skipping = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly maxLine = MAX_LINE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
      this.take(chunk.subarray(from, nl));
      if (this.skipping) this.skipping = false;
      else this.line(Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, ''));
      this.chunks = [];
      this.size = 0;
      from = nl + 1;
    }
    this.take(chunk.subarray(from));
  };

  private readonly onError = (err: Error) => this.onerror?.(err);

  // Adds a piece of the current line, unless it is being skipped or has just grown too long.
  private take(piece: Buffer): void {
    if (this.skipping || piece.length === 0) return;
    if (this.size + piece.length > this.maxLine) {
      this.chunks = [];
      this.size = 0;
      this.skipping = true;
      this.refuse(ErrorCode.InvalidRequest, `a message is longer than ${this.maxLine} bytes; it was skipped`);
      return;
    }
    this.chunks.push(piece);
    this.size += piece.length;
  }

  private line(text: string): void {
    if (text.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return this.refuse(ErrorCode.ParseError, 'a line is not JSON');
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) return this.refuse(ErrorCode.InvalidRequest, 'a line is not a JSON-RPC message');
    this.onmessage?.(parsed.data);
  }

  // A JSON-RPC error without an id: the request it answers could not be read.
  private refuse(code: number, message: string): void {
    this.onerror?.(new Error(message));
    this.output.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } })}\n`);
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(serializeMessage(message))) resolve();
      else this.output.once('drain', resolve);
    });
  }

  readonly close = once(async () => {
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.chunks = [];
    this.onclose?.();
  });
}
