import { Agent, request, type IncomingMessage } from 'node:http';
import { once } from '../runtime/once.ts';

// The CLI's exit statuses: scripts can tell an API refusal from a usage error or a stopped daemon.
export const EXIT = { OK: 0, API: 1, USAGE: 2, NO_DAEMON: 3 } as const;

// A failure the CLI reports and exits on, with the status it exits with.
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly problem?: { code: string; detail: string; status: number },
  ) {
    super(message);
  }
}

export interface Client {
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  stream(path: string, headers: Record<string, string>): Promise<AsyncIterable<Buffer>>;
  close(): Promise<void>;
}

async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function problemError(status: number, text: string): CliError {
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return new CliError(`${json?.code ?? status}: ${json?.detail ?? text}`, EXIT.API, json);
}

// Talks to the daemon over its unix socket with node:http (a CLI command is one short process:
// no client library to load); a refused or missing socket means "not running".
export function createClient(socketPath: string): Client {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const notRunning = (err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ECONNRESET') {
      return new CliError(`grove daemon is not running (no answer on ${socketPath}); start it with \`grove daemon\` or install it with \`grove install\``, EXIT.NO_DAEMON);
    }
    return err;
  };
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request({ socketPath, agent, method, path, headers }, resolve);
      req.once('error', (err) => reject(notRunning(err)));
      req.end(body);
    });
  return {
    async call(method, path, body) {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const res = await send(method, path, text === undefined ? {} : { 'content-type': 'application/json' }, text);
      const out = await readAll(res);
      if (res.statusCode! >= 400) throw problemError(res.statusCode!, out);
      return out === '' ? undefined : JSON.parse(out);
    },
    async stream(path, headers) {
      const res = await send('GET', path, headers);
      if (res.statusCode! >= 400) throw problemError(res.statusCode!, await readAll(res));
      return res;
    },
    close: once(async () => {
      agent.destroy();
    }),
  };
}

// Reads an SSE body into (event, data) pairs (the CLI's followers and `grove mcp`'s waits).
export async function* sse(body: AsyncIterable<Buffer>): AsyncGenerator<{ event: string; data: any }> {
  let buf = '';
  for await (const chunk of body) {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n\n')) !== -1) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) yield { event, data: JSON.parse(data) };
    }
  }
}
