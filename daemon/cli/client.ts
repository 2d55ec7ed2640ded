import { Pool } from 'undici';

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

// Talks to the daemon over its unix socket; a refused or missing socket means "not running".
export function createClient(socketPath: string): Client {
  const pool = new Pool('http://localhost', { socketPath, connections: 4, bodyTimeout: 0 });
  const notRunning = (err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'UND_ERR_SOCKET') {
      return new CliError(`grove daemon is not running (no answer on ${socketPath}); start it with \`grove daemon\` or install it with \`grove install\``, EXIT.NO_DAEMON);
    }
    return err;
  };
  return {
    async call(method, path, body) {
      let res;
      try {
        res = await pool.request({
          method: method as 'GET',
          path,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? null : JSON.stringify(body),
        });
      } catch (err) {
        throw notRunning(err);
      }
      const text = await res.body.text();
      const json = text === '' ? undefined : JSON.parse(text);
      if (res.statusCode >= 400) {
        throw new CliError(`${json?.code ?? res.statusCode}: ${json?.detail ?? text}`, EXIT.API, json);
      }
      return json;
    },
    async stream(path, headers) {
      let res;
      try {
        res = await pool.request({ method: 'GET', path, headers });
      } catch (err) {
        throw notRunning(err);
      }
      if (res.statusCode >= 400) {
        const json = JSON.parse(await res.body.text());
        throw new CliError(`${json.code}: ${json.detail}`, EXIT.API, json);
      }
      return res.body;
    },
    close: () => pool.close(),
  };
}
