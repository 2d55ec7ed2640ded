import { isIP, isIPv4 } from 'node:net';

// One entry of a confined session's network allow-list (DESIGN §18): what its agent needs, a
// base URL's host and port, and `.grove.json` `sandbox.network`.
export interface NetEntry {
  /** a lower-case host name, an IPv4 address, or an IPv6 address without brackets */
  host: string;
  /** `*.host`: the subdomains of `host`, not `host` itself */
  wildcard: boolean;
  /** null: any port (never for a loopback host) */
  port: number | null;
}

// A host name's labels: letters, digits, `-` and `_` (some service names use it), 1–63 each.
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

// The host in one canonical spelling (lower case, IPs as WHATWG URL writes them: `127.1` is
// `127.0.0.1`, `0:0::1` is `::1`), or null when it is neither a host name nor an IP.
export function normalizeHost(raw: string): string | null {
  const h = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (isIP(h) === 6) {
    try {
      return new URL(`http://[${h}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
  }
  let host: string;
  try {
    host = new URL(`http://${h}/`).hostname;
  } catch {
    return null;
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '' || host.length > 253) return null;
  if (isIPv4(host)) return host;
  return host.split('.').every((l) => LABEL.test(l)) ? host : null;
}

// `host`, `host:port`, `[v6]:port` or a bare IPv6 address split; null when malformed.
export function splitHostPort(s: string): { host: string; port: number | null } | null {
  let host: string;
  let port: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracket) [, host, port] = bracket as unknown as [string, string, string | undefined];
  else if (isIP(s) === 6) host = s;
  else {
    const m = /^([^:[\]]+)(?::(\d+))?$/.exec(s);
    if (!m) return null;
    [, host, port] = m as unknown as [string, string, string | undefined];
  }
  if (port === undefined) return { host, port: null };
  const n = Number(port);
  return Number.isInteger(n) && n >= 1 && n <= 65535 && /^\d{1,5}$/.test(port) ? { host, port: n } : null;
}

// Loopback and "this host" addresses: what reaches the machine's own sockets (grove's TCP front
// among them).
export function isLocalAddress(address: string): boolean {
  let a = address.toLowerCase();
  if (a.startsWith('::ffff:') && isIPv4(a.slice(7))) a = a.slice(7);
  if (isIPv4(a)) return a.startsWith('127.') || a.startsWith('0.');
  return a === '::1' || a === '::';
}

// Whether a host reaches the machine itself by its name or address alone.
export function isLocalHost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isLocalAddress(host));
}

// One entry of `sandbox.network` (or an agent's host list) parsed, or null when it is not a host,
// `*.host`, `host:port` or an IP (`[v6]:port` with a port), or names a loopback host without its
// port: the machine's own sockets are reached one port at a time.
export function parseNetworkEntry(s: string): NetEntry | null {
  const hp = splitHostPort(s.trim());
  if (!hp) return null;
  const wildcard = hp.host.startsWith('*.');
  const host = normalizeHost(wildcard ? hp.host.slice(2) : hp.host);
  if (host === null || (wildcard && isIP(host) !== 0)) return null;
  const entry = { host, wildcard, port: hp.port };
  return hp.port === null && isLoopbackEntry(entry) ? null : entry;
}

// Whether `entry` names `host` (canonical, as normalizeHost gives it) and `port`.
export function matches(entry: NetEntry, host: string, port: number): boolean {
  if (entry.port !== null && entry.port !== port) return false;
  return entry.wildcard ? host.endsWith(`.${entry.host}`) : host === entry.host;
}

// Whether a connection to `host`:`port` is allowed (`host` as the client named it, any spelling).
export function allows(entries: readonly NetEntry[], host: string, port: number): boolean {
  const h = normalizeHost(host);
  return h !== null && entries.some((e) => matches(e, h, port));
}

// Whether a connection to `host`:`port` that resolved to `address` is allowed: a name that
// resolves to a loopback address is allowed only by a loopback entry (which names its port), so
// an allowed name whose DNS answers 127.0.0.1 cannot reach grove's TCP front or another local port.
export function allowsAddress(entries: readonly NetEntry[], host: string, port: number, address: string): boolean {
  const h = normalizeHost(host);
  if (h === null) return false;
  const local = isLocalAddress(address);
  return entries.some((e) => matches(e, h, port) && (!local || isLoopbackEntry(e)));
}

// Whether the entry names the machine itself (`127.0.0.1:5432`, `localhost:8080`, `[::1]:9000`).
export function isLoopbackEntry(e: NetEntry): boolean {
  return isLocalHost(e.wildcard ? `x.${e.host}` : e.host);
}

// An entry as parseNetworkEntry reads it back.
export function formatEntry(e: NetEntry): string {
  const host = e.wildcard ? `*.${e.host}` : e.host;
  if (e.port === null) return host;
  return host.includes(':') ? `[${host}]:${e.port}` : `${host}:${e.port}`;
}
