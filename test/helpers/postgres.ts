// A real PostgreSQL for the tests (DESIGN §14.2): Debian's server, started once per test process
// in a temporary folder on a free loopback port, with password authentication; every daemon home
// or test store gets a database of its own. `npm run test:postgres` sets GROVE_TEST_POSTGRES=1,
// which puts the daemons and stores of test/helpers/daemon.ts and store.ts on it.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const onPostgres = process.env.GROVE_TEST_POSTGRES === '1';

const USER = 'grove';

export interface PostgresServer {
  port: number;
  password: string;
  /** the URL of database `db` on this server */
  url(db: string): string;
}

// The newest installed server's programs (Debian keeps each major version in its own folder).
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL server in ${root}: install Debian's postgresql package`);
  return path.join(root, newest, 'bin');
}

// PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user.
const asRoot = process.getuid?.() === 0;
function pgCommand(program: string, args: string[]): [string, string[]] {
  const exe = path.join(binDir(), program);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
}

function run(program: string, args: string[]): void {
  const [cmd, argv] = pgCommand(program, args);
  const r = spawnSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`${program} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

// A new cluster in a folder of its own (owned by the postgres user when run as root), with
// `password` for the test user; `dir` and its data folder.
function initCluster(): { dir: string; data: string; log: string; password: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'grove-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const password = randomBytes(12).toString('hex');
  writeFileSync(path.join(dir, 'pwfile'), `${password}\n`);
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((f) => Number(execFileSync('id', [f, 'postgres'], { encoding: 'utf8' }).trim())) as [number, number];
    chownSync(dir, uid, gid);
    chownSync(path.join(dir, 'pwfile'), uid, gid);
  }
  run('initdb', ['-D', data, '-U', USER, '--auth=scram-sha-256', `--pwfile=${path.join(dir, 'pwfile')}`, '--no-sync', '-E', 'UTF8', '--locale=C']);
  return { dir, data, log, password };
}

// Starts the cluster in `dir` on `port`, waiting until it takes connections.
function startCluster(c: { dir: string; data: string; log: string }, port: number): void {
  const opts = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${c.dir}`,
    // Durability is not what these tests are about: a test server that syncs nothing is faster.
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c shared_buffers=16MB',
    '-c max_connections=300',
  ].join(' ');
  try {
    run('pg_ctl', ['start', '-D', c.data, '-l', c.log, '-w', '-t', '60', '-o', opts]);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${existsSync(c.log) ? readFileSync(c.log, 'utf8') : ''}`);
  }
}

function stopCluster(data: string, mode: 'fast' | 'immediate'): void {
  if (!existsSync(path.join(data, 'postmaster.pid'))) return;
  const [cmd, argv] = pgCommand('pg_ctl', ['stop', '-D', data, '-m', mode, '-w']);
  spawnSync(cmd, argv, { stdio: 'ignore' });
}

// Starts a new cluster on a free port; a free port may be taken between asking and binding: try another then.
async function startOnFreePort(c: { dir: string; data: string; log: string }): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      startCluster(c, port);
      return port;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

async function start(): Promise<PostgresServer> {
  const c = initCluster();
  // Stopped and removed when this process exits: after every after() hook, so after the daemons
  // that use it have stopped.
  process.once('exit', () => {
    stopCluster(c.data, 'immediate');
    rmSync(c.dir, { recursive: true, force: true });
  });
  const port = await startOnFreePort(c);
  return { port, password: c.password, url: (db) => `postgresql://${USER}:${c.password}@127.0.0.1:${port}/${db}` };
}

// A server a test can stop and start again (on the same port, with its data), for the faults of
// a store gone at runtime (DESIGN §14.2); stopped and removed with `t`.
export interface OwnPostgresServer extends PostgresServer {
  /** a new, empty database on it; its URL */
  freshDatabase(): Promise<string>;
  /** stops it: `fast` ends every connection (57P01), `immediate` cuts them without a word */
  stop(mode?: 'fast' | 'immediate'): void;
  /** starts it again on its port */
  start(): void;
  /** stops its processes (SIGSTOP) without closing a connection: a server or network gone silent */
  freeze(): void;
  /** lets them run again (SIGCONT) */
  thaw(): void;
}

// The server's processes: the postmaster (first line of postmaster.pid) and its children.
function clusterPids(data: string): number[] {
  const main = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(main)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  return [main, ...children];
}

export async function ownPostgresServer(t: { after(fn: () => unknown): void }): Promise<OwnPostgresServer> {
  const c = initCluster();
  t.after(() => {
    if (existsSync(path.join(c.data, 'postmaster.pid'))) clusterPids(c.data).forEach((pid) => process.kill(pid, 'SIGCONT'));
    stopCluster(c.data, 'immediate');
    rmSync(c.dir, { recursive: true, force: true });
  });
  const port = await startOnFreePort(c);
  const url = (db: string) => `postgresql://${USER}:${c.password}@127.0.0.1:${port}/${db}`;
  let made = 0;
  return {
    port,
    password: c.password,
    url,
    freshDatabase: async () => {
      const name = `grove_own_${++made}`;
      await createDatabase(url('postgres'), name);
      return url(name);
    },
    stop: (mode = 'fast') => stopCluster(c.data, mode),
    start: () => startCluster(c, port),
    freeze: () => clusterPids(c.data).forEach((pid) => process.kill(pid, 'SIGSTOP')),
    thaw: () => clusterPids(c.data).forEach((pid) => process.kill(pid, 'SIGCONT')),
  };
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}

let server: Promise<PostgresServer> | null = null;

// This process's server, started by the first caller.
export function postgresServer(): Promise<PostgresServer> {
  return (server ??= start());
}

let made = 0;

// A new, empty database on this process's server; its URL.
export async function freshDatabase(): Promise<string> {
  const s = await postgresServer();
  const name = `grove_${++made}`;
  await createDatabase(s.url('postgres'), name);
  return s.url(name);
}

const byHome = new Map<string, Promise<string>>();

// The database of a daemon home (or a test store's folder): made at the first ask, the same at
// each restart of that home. Null off PostgreSQL: the daemon keeps its PGlite in the home.
export function storeUrlFor(home: string): Promise<string | null> {
  if (!onPostgres) return Promise.resolve(null);
  let url = byHome.get(home);
  if (!url) byHome.set(home, (url = freshDatabase()));
  return url;
}
