import type { IncomingMessage } from 'node:http';
import { once } from '../runtime/once.ts';
import { parseProblem } from './problem.ts';

// No daemon answers on the socket (refused, missing, or cut before it answered): the CLI exits 3
// on it, `grove mcp` says DAEMON_NOT_RUNNING.
export class DaemonUnreachable extends Error {
  constructor(
    readonly socketPath: string,
    cause: NodeJS.ErrnoException,
  ) {
    super(`grove daemon is not running (no answer on ${socketPath}); start it with \`grove daemon\` or install it with \`grove install\``, { cause });
  }
}

/** a streamed answer: its chunks, its headers, and destroy() to let go of it early */
export type Body = AsyncIterable<Buffer> & { headers: IncomingMessage['headers']; destroy(): void };

export interface Transport {
  /** a JSON request; an answer of 400 or more throws an ApiProblem */
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** a GET whose body is read as it comes (SSE, a diff) */
  stream(path: string, headers?: Record<string, string>): Promise<Body>;
  close(): Promise<void>;
}

async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const retryAfterOf = (res: IncomingMessage) => [res.headers['retry-after']].flat()[0];

// EPIPE: a forwarded socket (DESIGN §14.1) accepts at once, and ssh closes it when the remote
// daemon's socket refuses, sometimes before the request is written.
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE']);

// A failure to reach `socketPath` as the CLI reports it: DaemonUnreachable where no daemon
// answered, else the error itself.
export function unreachable(socketPath: string, err: NodeJS.ErrnoException): Error {
  return UNREACHABLE.has(err.code ?? '') ? new DaemonUnreachable(socketPath, err) : err;
}

// The daemon's API over a unix socket with node:http (a CLI command is one short process: no client
// library to load). It is given a socket path only: a local daemon's, or one forwarded from
// another machine, the same to it.
export function createTransport(socketPath: string): Transport {
  // Not `import … from 'node:http'`: its ESM namespace reads every export, WebSocket and
  // EventSource among them, which loads Node's bundled undici into every CLI command.
  const { Agent, request } = process.getBuiltinModule('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request({ socketPath, agent, method, path, headers }, resolve);
      req.once('error', (err: NodeJS.ErrnoException) => reject(unreachable(socketPath, err)));
      req.end(body);
    });
  return {
    async call(method, path, body) {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const res = await send(method, path, text === undefined ? {} : { 'content-type': 'application/json' }, text);
      const out = await readAll(res);
      if (res.statusCode! >= 400) throw parseProblem(res.statusCode!, out, retryAfterOf(res));
      return out === '' ? undefined : JSON.parse(out);
    },
    async stream(path, headers = {}) {
      const res = await send('GET', path, headers);
      if (res.statusCode! >= 400) throw parseProblem(res.statusCode!, await readAll(res), retryAfterOf(res));
      return res as Body;
    },
    close: once(async () => {
      agent.destroy();
    }),
  };
}
