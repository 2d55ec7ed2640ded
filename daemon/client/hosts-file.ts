// hosts.json (DESIGN §14.1): the machines `grove host add` saved, beside the user config, 0600.
// Read by the CLI (`--host NAME`, `grove host …`) and by the daemon (GET /api/hosts, the forwarder).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HOST_NAME_PATTERN, HostsFile, type SavedHost } from '../../schemas/host.ts';
import type { Paths } from '../runtime/paths.ts';
import { compile, createAjv, type Validator } from '../runtime/validation.ts';

export type HostsErrorCode = 'HOST_NAME_INVALID' | 'HOST_URL_INVALID' | 'HOST_EXISTS' | 'HOST_UNKNOWN' | 'HOSTS_FILE_INVALID';

// What a caller shows the person: the CLI exits 2 with it, the daemon answers it as a problem.
export class HostsError extends Error {
  constructor(
    readonly code: HostsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface SshTarget {
  /** ssh's destination: [user@]box */
  destination: string;
  port?: number;
  /** the remote daemon's socket, when the URL names it (else asked of the remote `grove socket`) */
  socket?: string;
}

export function hostsFilePath(paths: Pick<Paths, 'configFile'>): string {
  return path.join(path.dirname(paths.configFile), 'hosts.json');
}

export function isHostName(name: string): boolean {
  return new RegExp(HOST_NAME_PATTERN).test(name);
}

// ssh://[user@]box[:port][?socket=PATH]. Nothing else in the URL: a path, another query key or a
// fragment is refused rather than ignored, and no part may start with `-` (ssh would read an option).
export function parseSshUrl(url: string): SshTarget {
  const bad = (why: string) => new HostsError('HOST_URL_INVALID', `${JSON.stringify(url)} is not ssh://[user@]host[:port][?socket=PATH]: ${why}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad('not a URL');
  }
  if (u.protocol !== 'ssh:') throw bad('the scheme must be ssh');
  if (u.hostname === '') throw bad('no host');
  if (u.password !== '') throw bad('a password does not belong in the URL (SSH keys or the agent authenticate)');
  if (u.pathname !== '' && u.pathname !== '/') throw bad('a path is not allowed');
  if (u.hash !== '') throw bad('a fragment is not allowed');
  const keys = [...u.searchParams.keys()];
  if (keys.some((k) => k !== 'socket') || keys.length > 1) throw bad('the only query key is socket');
  const user = decodeURIComponent(u.username);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  if (host.startsWith('-') || user.startsWith('-')) throw bad('a host or user may not start with -');
  const socket = u.searchParams.get('socket') ?? undefined;
  if (socket !== undefined && !path.isAbsolute(socket)) throw bad('socket must be an absolute path');
  return { destination: user === '' ? host : `${user}@${host}`, ...(u.port === '' ? {} : { port: Number(u.port) }), ...(socket === undefined ? {} : { socket }) };
}

// hosts.json's validator: a long-lived reader (the daemon's forwarder) compiles it once.
export function hostsFileValidator(): Validator<HostsFile> {
  return compile(createAjv(), HostsFile);
}

export async function readHosts(file: string, valid: Validator<HostsFile> = hostsFileValidator()): Promise<SavedHost[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new HostsError('HOSTS_FILE_INVALID', `${file}: ${(err as Error).message}`);
  }
  if (!valid(json)) throw new HostsError('HOSTS_FILE_INVALID', `${file}: ${valid.issues().map((i) => `${i.path} ${i.message}`).join('; ')}`);
  return json.hosts;
}

// Written whole to a temporary file and renamed: a reader never sees half a file.
async function saveHosts(file: string, hosts: SavedHost[]): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ hosts } satisfies HostsFile, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export async function addHost(file: string, host: SavedHost): Promise<SavedHost> {
  if (!isHostName(host.name)) throw new HostsError('HOST_NAME_INVALID', `${JSON.stringify(host.name)} is not a host name (lowercase letters, digits, - and _, at most 63)`);
  parseSshUrl(host.url);
  const hosts = await readHosts(file);
  if (hosts.some((h) => h.name === host.name)) throw new HostsError('HOST_EXISTS', `a host named ${host.name} is saved already (grove host rm ${host.name} first)`);
  await saveHosts(file, [...hosts, { name: host.name, url: host.url }]);
  return host;
}

export async function removeHost(file: string, name: string): Promise<SavedHost> {
  const hosts = await readHosts(file);
  const found = hosts.find((h) => h.name === name);
  if (!found) throw new HostsError('HOST_UNKNOWN', `no saved host named ${JSON.stringify(name)}`);
  await saveHosts(file, hosts.filter((h) => h !== found));
  return found;
}

// `--host NAME|URL` / GROVE_HOST: a saved name, or an ssh:// URL used as it is.
export async function resolveHost(file: string, nameOrUrl: string): Promise<{ name: string | null; url: string; target: SshTarget }> {
  if (nameOrUrl.startsWith('ssh://')) return { name: null, url: nameOrUrl, target: parseSshUrl(nameOrUrl) };
  const found = (await readHosts(file)).find((h) => h.name === nameOrUrl);
  if (!found) throw new HostsError('HOST_UNKNOWN', `no saved host named ${JSON.stringify(nameOrUrl)} (grove host add NAME ssh://… saves one)`);
  return { name: found.name, url: found.url, target: parseSshUrl(found.url) };
}
