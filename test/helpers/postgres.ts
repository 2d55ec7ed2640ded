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

async function start(): Promise<PostgresServer> {
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
  // Stopped and removed when this process exits: after every after() hook, so after the daemons
  // that use it have stopped.
  process.once('exit', () => {
    if (existsSync(path.join(data, 'postmaster.pid'))) {
      const [cmd, argv] = pgCommand('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      spawnSync(cmd, argv, { stdio: 'ignore' });
    }
    rmSync(dir, { recursive: true, force: true });
  });
  run('initdb', ['-D', data, '-U', USER, '--auth=scram-sha-256', `--pwfile=${path.join(dir, 'pwfile')}`, '--no-sync', '-E', 'UTF8', '--locale=C']);
  // A free port may be taken between asking and binding: try another then.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const opts = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${dir}`,
      // Durability is not what these tests are about: a test server that syncs nothing is faster.
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c shared_buffers=16MB',
      '-c max_connections=300',
    ].join(' ');
    try {
      run('pg_ctl', ['start', '-D', data, '-l', log, '-w', '-t', '60', '-o', opts]);
    } catch (err) {
      if (attempt < 3) continue;
      throw new Error(`${(err as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
    return { port, password, url: (db) => `postgresql://${USER}:${password}@127.0.0.1:${port}/${db}` };
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
  const admin = new pg.Client({ connectionString: s.url('postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
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
