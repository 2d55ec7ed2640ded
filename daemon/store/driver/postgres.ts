// The shared driver: a PostgreSQL server (14 or newer) named by `database_url`, through a pool
// of node-postgres connections. Same migrations, same row shapes, same SQLSTATE codes as PGlite.
import pg from 'pg';
import { once } from '../../runtime/once.ts';
import type { Logger } from '../../runtime/log.ts';
import { MIGRATIONS_DIR, pendingMigrations, RECORD_MIGRATION, SCHEMA_MIGRATIONS_DDL } from './migrations.ts';
import { createListeners } from '../listeners.ts';
import { runInTurn, StoreUnreachableError, type Db, type Notified, type Store } from '../store.ts';
import { retryDelay, type RetryPolicy } from '../../runtime/retry.ts';

// Connections at most: statements take turns (below), so one is busy at a time; a spare one is
// ready when the server has dropped the other.
const POOL_SIZE = 2;
// A server that takes no connection is unreachable, rather than a start or a request that hangs.
const CONNECT_TIMEOUT_MS = 5000;
// A statement with no answer by then is taken as a store gone (a server or network that went
// silent): the request answers 503 rather than hanging, and the connection is dropped.
const QUERY_TIMEOUT_MS = 5000;
// The key of the advisory lock that daemons starting on one database at once migrate under.
const MIGRATION_LOCK = 0x67726f7665; // "grove"
const OLDEST = 140000;
// A lost listening connection is opened again after this long, for as long as it takes.
const RELISTEN: RetryPolicy = { delayMs: 1000 };

// PGlite's parsers where node-postgres differs, so that table modules read one shape: int8 as a
// number (a BigInt beyond 2^53), date as a Date, interval as its text, bytea as a Uint8Array.
const PGLITE_PARSERS: Record<number, (text: string) => unknown> = {
  17: (t) => new Uint8Array(Buffer.from(t.slice(2), 'hex')),
  20: (t) => {
    const n = BigInt(t);
    return n < Number.MIN_SAFE_INTEGER || n > Number.MAX_SAFE_INTEGER ? n : Number(n);
  },
  1082: (t) => new Date(t),
  1186: (t) => t,
};
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format ?? 'text') === 'text' && PGLITE_PARSERS[oid] ? PGLITE_PARSERS[oid] : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

// The URL as it may be shown: without its password.
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    u.searchParams.forEach((_v, k) => {
      if (k === 'password') u.searchParams.set(k, '***');
    });
    return u.toString();
  } catch {
    return 'the database_url';
  }
}

// A message about `url` with its password taken out wherever it appears.
function scrub(message: string, url: string): string {
  let password = '';
  try {
    const u = new URL(url);
    password = decodeURIComponent(u.password) || (u.searchParams.get('password') ?? '');
  } catch {
    // an unparsable URL: pg could not have used a password from it either
  }
  return password ? message.split(password).join('***') : message;
}

// What says the server cannot be reached, rather than that a statement is wrong: the server
// shutting down or starting (57P01-57P03), a connection exception (class 08), the socket's errors,
// and node-postgres's own words for a lost connection or a timeout.
const UNREACHABLE_STATES = /^(57P0[123]|08[0-9A-Z]{3})$/;
const UNREACHABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT']);
const UNREACHABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error)/;

export function isUnreachable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (UNREACHABLE_STATES.test(e.code) || UNREACHABLE_ERRNOS.has(e.code))) return true;
  if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message)) return true;
  // A connect to a name with several addresses fails with each address's error.
  if (Array.isArray(e.errors) && e.errors.some((x) => isUnreachable(x, depth + 1))) return true;
  return isUnreachable(e.cause, depth + 1);
}

// The rows an INSERT, UPDATE, DELETE, COPY or MERGE changed, as PGlite counts them; 0 otherwise.
const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE']);
const affected = (r: pg.QueryResult) => (COUNTED.has(r.command) ? (r.rowCount ?? 0) : 0);

export async function openPostgresStore(opts: { url: string; log: Logger }): Promise<Store> {
  const { url, log } = opts;
  const shown = redactUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'grove',
    // Timestamps read and written as PGlite's are, whatever the server's default zone.
    options: '-c TimeZone=UTC',
    types,
    // A server gone without a word (a machine off, a network cut) is noticed on idle connections too.
    keepAlive: true,
  });
  // A pooled connection the server drops while idle: the next query takes another.
  const connectionFailed = (err: Error) => log.warn({ err: { message: scrub(err.message, url), code: (err as { code?: string }).code } }, 'a store connection failed');
  pool.on('error', connectionFailed);

  let first: pg.PoolClient;
  try {
    first = await pool.connect();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new StoreUnreachableError(`cannot reach the store at ${shown}: ${scrub((err as Error).message || String(err), url)}`);
  }
  try {
    const { rows } = await first.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version_num']);
    if (Number(rows[0]!.v) < OLDEST) throw new Error(`the store at ${shown} is PostgreSQL ${rows[0]!.v}; grove needs 14 or newer`);
    await migrate(first, log);
    first.release();
  } catch (err) {
    first.release(true);
    await pool.end().catch(() => {});
    throw err;
  }
  log.info({ store: shown }, 'store opened on PostgreSQL');

  // Bounded here rather than for the pool: migrations (above) take what they take.
  const query = async <T>(on: pg.Pool | pg.PoolClient, sql: string, params: unknown[]) => {
    // query_timeout is read per query by node-postgres, though its types do not say so.
    const r = await on.query({ text: sql, values: params, query_timeout: QUERY_TIMEOUT_MS } as pg.QueryConfig);
    return { rows: r.rows as T[], affectedRows: affected(r) };
  };

  // A failure that means the store cannot be reached becomes the one error the API answers 503
  // STORE_UNAVAILABLE with (DESIGN §14.2); any other is the caller's to handle, as it was.
  const unreachable = (err: unknown): unknown =>
    isUnreachable(err) ? new StoreUnreachableError(`the store at ${shown} cannot be reached: ${scrub((err as Error).message || String(err), url)}`) : err;

  // One statement or transaction at a time, in the order asked, as on PGlite's one connection:
  // a read asked after a write sees it, and this daemon's events commit in seq order (the event
  // bus relies on both). The pool still replaces a connection the server dropped.
  let turn: Promise<unknown> = Promise.resolve();
  // How many statements found the store unreachable, and the last such error: a statement that
  // waited behind one of them fails with it rather than waiting out timeouts of its own in turn,
  // so that no request waits longer than about one timeout while the store is gone.
  let failures = 0;
  let lastFailure: Error | null = null;
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const asked = failures;
    const attempt = async () => {
      if (failures !== asked) throw lastFailure!;
      try {
        return await fn();
      } catch (err) {
        const e = unreachable(err);
        if (e instanceof StoreUnreachableError) {
          failures++;
          lastFailure = e;
        }
        throw e;
      }
    };
    const run = turn.then(attempt, attempt);
    turn = run.catch(() => {});
    return run;
  };

  function txDb(client: pg.PoolClient): Db {
    const tx: Db = {
      query: (sql, params = []) => query(client, sql, params),
      transaction: () => Promise.reject(new Error('nested transactions are not supported')),
      batch: (statements) => runInTurn(tx, statements),
    };
    return tx;
  }

  const db: Db = {
    query: (sql, params = []) => inTurn(() => query(pool, sql, params)),
    batch: (statements) => db.transaction((tx) => runInTurn(tx, statements)),
    transaction: <T>(fn: (tx: Db) => Promise<T>) =>
      inTurn(async () => {
        // The transaction holds one pooled connection from BEGIN to its end.
        const client = await pool.connect();
        const tx = txDb(client);
        // A connection whose ROLLBACK failed, or that lost the server or timed out (a statement
        // may still run on it), is not given back: the pool drops it.
        let broken: Error | undefined;
        // The server ending the connection between two statements is told by an 'error' event,
        // which the pool hears only on idle connections: unheard, it would end the daemon. The
        // next statement then fails as unreachable.
        const lost = (err: Error) => {
          broken ??= err;
          connectionFailed(err);
        };
        client.on('error', lost);
        try {
          await tx.query('BEGIN');
          let result: T;
          try {
            result = await fn(tx);
          } catch (err) {
            // A connection that cannot answer is dropped instead: the server rolls back then.
            if (isUnreachable(err)) broken = err as Error;
            else await tx.query('ROLLBACK').catch((e: Error) => (broken = e));
            throw err;
          }
          await tx.query('COMMIT');
          return result;
        } catch (err) {
          if (isUnreachable(err)) broken ??= err as Error;
          throw err;
        } finally {
          client.off('error', lost);
          client.release(broken);
        }
      }),
  };

  const listening = listenOn(url, log);

  return {
    db,
    shared: true,
    listen: listening.listen,
    notify: async (channel, payload) => {
      await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    close: once(async () => {
      await listening.close();
      await pool.end();
      log.info('store closed');
    }),
  };
}

// LISTEN needs a connection of its own, held for as long as anyone listens: opened at the first
// listener, opened again (and every listener told it may have missed something) whenever the
// server drops it.
function listenOn(url: string, log: Logger) {
  const listeners = createListeners();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;
  // Whether a connection has listened before: a later one may have missed notifications.
  let wasOpen = false;

  const relisten = () => {
    if (closed || retry || listeners.channels().length === 0) return;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, retryDelay(RELISTEN, 1));
  };

  function connect(): Promise<void> {
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'grove listen', keepAlive: true });
      const lost = (err?: Error) => {
        if (client !== c) return;
        client = null;
        if (!closed) log.warn({ err: err && { message: scrub(err.message, url) } }, 'the store connection that listens was lost; opening it again');
        c.end().catch(() => {});
        relisten();
      };
      c.on('error', lost);
      c.on('end', () => lost());
      c.on('notification', (n) => listeners.deliver(n.channel, n.payload ?? ''));
      try {
        await c.connect();
        for (const ch of listeners.channels()) await c.query(`LISTEN ${ch}`);
        if (closed) return void (await c.end().catch(() => {}));
        const again = client === null && wasOpen;
        client = c;
        wasOpen = true;
        // Whatever was notified while no connection listened has to be read now.
        if (again) listeners.deliverAll();
      } catch {
        c.end().catch(() => {});
        relisten();
      }
    })().finally(() => (connecting = null));
    return connecting;
  }

  return {
    listen(channel: string, fn: Notified): () => void {
      const fresh = !listeners.has(channel);
      const remove = listeners.add(channel, fn);
      // LISTEN twice is harmless: the channel may also be listened to by a connect() under way.
      if (fresh) void (client ? Promise.resolve() : connect()).then(() => client?.query(`LISTEN ${channel}`).catch(() => {}));
      return remove;
    },
    close: once(async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    }),
  };
}

// Applies the migrations not yet applied, each in its own transaction, under an advisory lock:
// of several daemons starting on one database at once, one migrates and the others then find
// nothing left to do.
async function migrate(client: pg.PoolClient, log: Logger): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(SCHEMA_MIGRATIONS_DDL);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    for (const m of pendingMigrations(MIGRATIONS_DIR, rows.map((r) => r.version))) {
      await client.query('BEGIN');
      try {
        await client.query(m.sql); // no parameters: the simple protocol runs the file's statements
        await client.query(RECORD_MIGRATION, [m.version, m.file]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${m.file} failed: ${(err as Error).message}`, { cause: err });
      }
      log.info({ migration: m.file }, 'migration applied');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
  }
}
