// The saved SSH hosts as the daemon serves them (DESIGN §14.1): GET /api/hosts says whether each
// answers, and /api/hosts/NAME/<API path> is that host's API over its SSH forward.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import type { SavedHost, SshHost } from '../../schemas/host.ts';
import { HostsError, hostsFileValidator, isHostName, parseSshUrl, readHosts } from '../client/hosts-file.ts';
import { probeHost, type Prober } from '../client/probe.ts';
import { openForward, SshError, type ForwardOptions } from '../client/ssh.ts';
import { GroveError } from '../errors.ts';
import { writeProblem } from '../http/api.ts';
import { assertJsonContentType, hasBody } from '../http/body.ts';
import { proxy } from '../http/proxy.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';

// /api/hosts/NAME/api/…: the rest is the remote's own API path, so a client of one daemon
// reaches another by a prefix alone.
const FORWARDED = /^\/api\/hosts\/([^/?]+)(\/api\/[^?]*(?:\?.*)?)$/;

export interface SshHosts {
  list(): Promise<SshHost[]>;
  /** true when it answered the request (a path of /api/hosts/NAME/…) */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

export function createSshHosts(deps: { hostsFile: string; ssh: ForwardOptions; log: Logger; probeMs?: number }): SshHosts {
  const { log } = deps;
  // One open at a time per URL: a listing and a forwarded request at once share it.
  const opening = new Map<string, Promise<string>>();
  // One connection pool per forward socket, kept while the daemon runs.
  const pools = new Map<string, Pool>();

  // The file is read at every use (`grove host add` does not tell the daemon); its schema once.
  const valid = hostsFileValidator();
  async function saved(): Promise<SavedHost[]> {
    try {
      return await readHosts(deps.hostsFile, valid);
    } catch (err) {
      if (err instanceof HostsError) throw new GroveError('HOSTS_FILE_INVALID', err.message);
      throw err;
    }
  }

  function socketOf(url: string): Promise<string> {
    let p = opening.get(url);
    if (!p) {
      // A live forward costs one local connect to find (openForward); ssh runs only without one.
      p = openForward(parseSshUrl(url), deps.ssh).then((f) => f.socketPath);
      opening.set(url, p);
      void p.finally(() => opening.delete(url)).catch(() => {});
    }
    return p;
  }

  function poolOf(socketPath: string): Pool {
    let pool = pools.get(socketPath);
    if (!pool) pools.set(socketPath, (pool = new Pool('http://localhost', { socketPath })));
    return pool;
  }

  // Its forward shared with the requests to that host, its answer read through that forward's pool.
  const prober: Prober = {
    socketOf,
    async health(socket, signal) {
      const res = await poolOf(socket).request({ method: 'GET', path: '/api/health', signal });
      const body = (await res.body.json()) as { version?: unknown };
      if (res.statusCode !== 200) throw new Error(`/api/health answered ${res.statusCode}`);
      return body;
    },
    ms: deps.probeMs,
    failed: (h, reason) => log.info({ host: h.name, reason }, 'SSH host not reachable'),
  };

  async function forward(name: string, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The same refusal as a local request's, before anything leaves this machine.
    if (hasBody(req)) assertJsonContentType(req);
    const host = isHostName(name) ? (await saved()).find((h) => h.name === name) : undefined;
    if (!host) throw new GroveError('NOT_FOUND', `no saved host named ${JSON.stringify(decodeURIComponent(name))} (grove host add NAME ssh://… saves one)`);
    let socket: string;
    try {
      socket = await socketOf(host.url);
    } catch (err) {
      if (err instanceof SshError || err instanceof HostsError) throw new GroveError('HOST_UNREACHABLE', `${host.name}: ${err.message}`);
      throw err;
    }
    proxy(poolOf(socket), req, res, {
      path,
      unreachable: (err) => {
        log.warn({ host: host.name, err }, 'SSH host unreachable over its forward');
        writeProblem(req, res, 'HOST_UNREACHABLE', `${host.name}: its daemon did not answer over the SSH forward (${err.message})`);
      },
    });
  }

  return {
    list: async () => Promise.all((await saved()).map((h) => probeHost(h, prober))),
    handle(req, res) {
      const m = FORWARDED.exec(req.url ?? '');
      if (!m) return false;
      forward(m[1]!, m[2]!, req, res).catch((err: unknown) => {
        if (res.headersSent) return void res.destroy();
        if (err instanceof GroveError) return writeProblem(req, res, err.code, err.detail);
        log.error({ err, url: req.url }, 'forward to an SSH host failed');
        writeProblem(req, res, 'HOST_UNREACHABLE', 'the host could not be reached; see the daemon log');
      });
      return true;
    },
    close: once(async () => {
      await Promise.all([...pools.values()].map((p) => p.close()));
      pools.clear();
    }),
  };
}
