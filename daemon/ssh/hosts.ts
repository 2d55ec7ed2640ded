// The saved SSH hosts as the daemon serves them (DESIGN §14.1): GET /api/hosts says whether each
// answers, and /api/hosts/NAME/<API path> is that host's API over its SSH forward.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import type { SavedHost, SshHost } from '../../schemas/host.ts';
import { HostsError, hostsFileValidator, isHostName, parseSshUrl, readHosts } from '../client/hosts-file.ts';
import { openForward, SshError, type ForwardOptions } from '../client/ssh.ts';
import { GroveError } from '../errors.ts';
import { writeProblem } from '../http/api.ts';
import { assertJsonContentType, hasBody } from '../http/body.ts';
import { proxy } from '../http/proxy.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';

// How long GET /api/hosts waits for one host: its forward opened and its /api/health answered.
// A host past it is shown unreachable; the list never waits on the slowest machine for long.
const PROBE_MS = 5000;

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
  const probeMs = deps.probeMs ?? PROBE_MS;
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

  async function probe(h: SavedHost): Promise<SshHost> {
    const down: SshHost = { kind: 'ssh', name: h.name, url: h.url, reachable: false, version: null };
    const signal = AbortSignal.timeout(probeMs);
    try {
      const socket = await Promise.race([
        socketOf(h.url),
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      ]);
      const res = await poolOf(socket).request({ method: 'GET', path: '/api/health', signal });
      const body = (await res.body.json()) as { version?: unknown };
      if (res.statusCode !== 200 || typeof body.version !== 'string') return down;
      return { ...down, reachable: true, version: body.version };
    } catch (err) {
      log.info({ host: h.name, reason: (err as Error).message }, 'SSH host not reachable');
      return down;
    }
  }

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
    list: async () => Promise.all((await saved()).map(probe)),
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
