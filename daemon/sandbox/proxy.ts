import { rmSync } from 'node:fs';
import { lookup as dnsLookup } from 'node:dns/promises';
import type http from 'node:http';
import { isIP } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { once } from '../runtime/once.ts';
import { allows, allowsAddress, isLoopbackEntry, normalizeHost, splitHostPort, type NetEntry } from './allow.ts';

// A connection the proxy was asked to make: `host` as the client named it, canonical.
export interface NetTarget {
  host: string;
  port: number;
}

// What the proxy records of a refused connection, one per connection (the daemon counts them:
// `result.blocked`, DESIGN §18).
export interface NetRecord {
  kind: 'network';
  /** `host:port`, an IPv6 host in brackets */
  target: string;
}

export interface NetProxyOptions {
  /** the folder of the proxy's sockets (bound read-only into the sandbox) */
  dir: string;
  allow: readonly NetEntry[];
  /** told of each refused connection */
  record: (r: NetRecord) => void;
  /** targets refused without asking (an agent's own telemetry): recorded, never a question */
  refuse?: readonly NetEntry[];
  /** read/edit: a target not allowed is asked about, its connection held until the answer */
  ask?: (t: NetTarget) => Promise<boolean>;
  /** a host name's address (default: the system resolver, as the agent's own would) */
  lookup?: (host: string) => Promise<string>;
}

export interface NetProxy {
  /** resolves once every socket listens; rejects when one cannot */
  ready: Promise<void>;
  /** stops listening and ends every connection; once, however often called */
  close(): Promise<void>;
}

// A loopback port reached inside the sandbox on its own number, piped to the same port outside.
export interface LoopbackForward {
  /** the address inside the sandbox's network namespace (127.0.0.1 or ::1) */
  bind: string;
  port: number;
  /** the host outside, as the entry names it */
  host: string;
  socket: string;
}

export interface NetSockets {
  proxy: string;
  forwards: LoopbackForward[];
}

// The longest path a unix socket can have on Linux (sun_path, 108 bytes with its NUL).
const MAX_SOCKET_PATH = 107;

// Where the proxy's sockets are in `dir`: the proxy's, and one per loopback entry with a port
// (not a wildcard: it names no one host), one per address and port inside.
export function netSockets(dir: string, allow: readonly NetEntry[]): NetSockets {
  const forwards: LoopbackForward[] = [];
  for (const e of allow) {
    if (e.wildcard || e.port === null || !isLoopbackEntry(e)) continue;
    const bind = isIP(e.host) === 0 ? '127.0.0.1' : e.host;
    if (forwards.some((f) => f.bind === bind && f.port === e.port)) continue;
    forwards.push({ bind, port: e.port, host: e.host, socket: path.join(dir, `${forwards.length}.sock`) });
  }
  return { proxy: path.join(dir, 'proxy.sock'), forwards };
}

export function formatTarget(t: NetTarget): string {
  return isIP(t.host) === 6 ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
}

class Refused extends Error {}

// A filtering proxy for one confined session (DESIGN §18): an HTTP proxy on a unix socket
// (CONNECT host:port, and absolute-form http:// requests) that forwards what `allow` names and
// answers 403 to the rest, each refusal recorded; and each loopback entry's socket piped raw to
// that port, for clients that ignore the proxy variables.
export function createNetProxy(opts: NetProxyOptions): NetProxy {
  const layout = netSockets(opts.dir, opts.allow);
  const lookup = opts.lookup ?? (async (host: string) => (await dnsLookup(host)).address);
  const open = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    return s;
  };
  // The address to connect to, or Refused (recorded). A name allowed by the list must still not
  // resolve to a loopback address its entry does not name (allow.ts).
  const permit = async (t: NetTarget): Promise<string> => {
    let entries = opts.allow;
    if (!allows(entries, t.host, t.port)) {
      const quiet = opts.refuse !== undefined && allows(opts.refuse, t.host, t.port);
      if (quiet || !opts.ask || !(await opts.ask(t).catch(() => false))) throw refuse(t);
      entries = [{ host: t.host, wildcard: false, port: t.port }];
    }
    const address = isIP(t.host) !== 0 ? t.host : await lookup(t.host);
    if (!allowsAddress(entries, t.host, t.port, address)) throw refuse(t);
    return address;
  };
  const refuse = (t: NetTarget): Refused => {
    opts.record({ kind: 'network', target: formatTarget(t) });
    return new Refused(formatTarget(t));
  };

  // Not `import … from 'node:http'`: its ESM namespace reads every export, which loads Node's
  // bundled undici into the runner's start (as in client/transport.ts).
  const { createServer, request } = process.getBuiltinModule('node:http');
  const server = createServer({ requireHostHeader: false });
  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const t = target(req.url ?? '', null);
    if (!t) return void client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    client.on('error', () => client.destroy());
    permit(t).then(
      (address) => {
        let connected = false;
        const up = track(net.connect({ host: address, port: t.port }));
        up.on('connect', () => {
          connected = true;
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) up.write(head);
          up.pipe(client).pipe(up);
        });
        up.on('error', () => (connected ? client.destroy() : client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n')));
        client.on('close', () => up.destroy());
      },
      (err) => client.end(`HTTP/1.1 ${err instanceof Refused ? '403 Forbidden' : '502 Bad Gateway'}\r\nConnection: close\r\n\r\n`),
    );
  });
  server.on('request', (req, res) => {
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {
      // an origin-form request: this is a proxy, not a server
    }
    const t = url?.protocol === 'http:' ? target(url.host, 80) : null;
    if (!url || !t) return void res.writeHead(400, { connection: 'close' }).end('grove: only http:// requests and CONNECT go through this proxy\n');
    permit(t).then(
      (address) => {
        const headers = { ...req.headers };
        for (const h of ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive']) delete headers[h];
        const up = request({ host: address, port: t.port, method: req.method, path: url.pathname + url.search, headers, agent: false });
        up.on('response', (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502, { connection: 'close' }).end()));
        res.on('close', () => up.destroy());
        req.pipe(up);
      },
      (err) => res.writeHead(err instanceof Refused ? 403 : 502, { connection: 'close' }).end(err instanceof Refused ? `grove: the sandbox does not allow ${err.message}\n` : ''),
    );
  });

  const forwarders = layout.forwards.map((f) =>
    net.createServer((client) => {
      track(client);
      const up = track(net.connect({ host: f.host, port: f.port }));
      client.pipe(up).pipe(client);
      client.on('error', () => up.destroy());
      up.on('error', () => client.destroy());
    }),
  );
  const servers: net.Server[] = [server, ...forwarders];
  const paths = [layout.proxy, ...layout.forwards.map((f) => f.socket)];

  const ready = Promise.all(
    servers.map(
      (s, i) =>
        new Promise<void>((resolve, reject) => {
          const p = paths[i]!;
          if (Buffer.byteLength(p) > MAX_SOCKET_PATH) return reject(new Error(`the sandbox's socket path is longer than a unix socket allows (${MAX_SOCKET_PATH} bytes): ${p}`));
          rmSync(p, { force: true }); // left by a proxy that was killed
          s.once('error', reject);
          s.listen(p, () => resolve());
        }),
    ),
  ).then(() => undefined);
  ready.catch(() => {}); // the caller awaits it; close() must not see it unhandled

  const close = once(async () => {
    const stopped = servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())));
    for (const s of open) s.destroy();
    await Promise.all(stopped);
    for (const p of paths) rmSync(p, { force: true });
  });
  return { ready, close };
}

// `host:port` of a request's target, canonical; `port` when it names none (null: it must).
function target(s: string, port: number | null): NetTarget | null {
  const hp = splitHostPort(s);
  const host = hp && normalizeHost(hp.host);
  const p = hp?.port ?? port;
  return host && p !== null ? { host, port: p } : null;
}
