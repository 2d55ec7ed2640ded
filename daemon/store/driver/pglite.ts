// The embedded driver: PGlite in a process of its own (worker.ts), in the data folder.
import { fork } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { once } from '../../runtime/once.ts';
import { built } from '../../runtime/root.ts';
import type { Logger } from '../../runtime/log.ts';
import { MIGRATIONS_DIR } from './migrations.ts';
import { PGLITE_CONF, pgdataDir } from './pglite-options.ts';
import { TEMPLATE_DATA_DIR } from './template.ts';
import { firstStart, firstStartMessage } from './create.ts';
import { fromWire, type StoreReply, type StoreRequest, type StoreWorkerData } from './protocol.ts';
import { createListeners } from '../listeners.ts';
import { runInTurn, type Db, type Store } from '../store.ts';

const ENTRY = built('daemon/store/driver/worker.js');

type Ok = Extract<StoreReply, { type: 'reply'; ok: true }>;
// A request before its id is given (Omit over a union keeps only the common keys).
type Unsent = StoreRequest extends infer R ? (R extends StoreRequest ? Omit<R, 'id'> : never) : never;

// Opens (creating if needed) the one PGlite of this daemon in its own process, resolving once it
// is open and migrated; `db` sends it queries and transactions as messages. A process, not a
// thread: PGlite's memory in the daemon's process made every fork of it (each git, each agent)
// several times dearer, and a fork holds up the thread that makes it.
// `template`: the data folder of a prepared store to copy at a first start (template.ts; null:
// none, initdb runs).
export async function openPgliteStore(opts: { dataDir: string; log: Logger; template?: string | null }): Promise<Store> {
  const { log } = opts;
  const pgdata = pgdataDir(opts.dataDir);
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  // A first start's store is made in the store's process; what it is about to do is said here,
  // where the log is written as it is said.
  const first = firstStart(pgdata, opts.template === undefined ? TEMPLATE_DATA_DIR : opts.template);
  if (first) log.info({ dir: pgdata }, firstStartMessage(first.prepared));
  // Every stored round passes through the store's young generation, which V8 lets grow under
  // load and keeps: bounded as the daemon's is by npm start's flag (docs/decisions/build-and-runtime.md).
  // A CPU profile asked of the daemon (--cpu-prof) is asked of its store too.
  const execArgv = ['--liftoff-only', '--max-semi-space-size=4', ...process.execArgv.filter((a) => a.startsWith('--cpu-prof'))];
  const data: StoreWorkerData = { pgdata, conf: PGLITE_CONF, migrations: MIGRATIONS_DIR, prepared: first?.prepared ?? null };
  // 'advanced': rows cross as PGlite made them (Dates, BigInts, byte arrays), which JSON would not keep.
  const worker = fork(ENTRY, [JSON.stringify(data)], { execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, { resolve: (r: Ok) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let gone: Error | null = null;

  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: StoreReply) => {
      if (m.type === 'ready') return resolve();
      if (m.type === 'failed') return reject(fromWire(m.error));
      if (m.type === 'log') return log[m.level](m.obj, m.msg);
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.ok) w.resolve(m);
      else w.reject(fromWire(m.error));
    });
    worker.once('error', (err) => {
      gone = err;
      reject(err);
    });
    worker.once('exit', (code, signal) => {
      gone ??= new Error(`the store's process exited (${signal ?? `code ${code}`})`);
      reject(gone);
      for (const w of waiting.values()) w.reject(gone);
      waiting.clear();
    });
  });

  function call(req: Unsent): Promise<Ok> {
    if (gone) return Promise.reject(gone);
    const id = nextId++;
    return new Promise<Ok>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      worker.send({ ...req, id } as StoreRequest);
    });
  }

  function dbFor(tx: number | null): Db {
    return {
      async query<T>(sql: string, params: unknown[] = []) {
        const r = await call({ op: 'query', sql, params, tx });
        return { rows: (r.rows ?? []) as T[], ...(r.affectedRows === undefined ? {} : { affectedRows: r.affectedRows }) };
      },
      async batch(statements) {
        if (tx !== null) return runInTurn(this, statements);
        await call({ op: 'batch', statements });
      },
      async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
        if (tx !== null) throw new Error('nested transactions are not supported');
        const { tx: txId } = await call({ op: 'begin' });
        let result: T;
        try {
          result = await fn(dbFor(txId!));
        } catch (err) {
          await call({ op: 'end', tx: txId!, commit: false }).catch(() => {});
          throw err;
        }
        await call({ op: 'end', tx: txId!, commit: true });
        return result;
      },
    };
  }

  // Ends the store's process, at once: what it had not written is in its WAL.
  const stop = async () => {
    if (worker.exitCode !== null || worker.signalCode !== null) return;
    const exited = new Promise<void>((r) => worker.once('exit', () => r()));
    worker.kill('SIGKILL');
    await exited;
  };

  try {
    await ready;
  } catch (err) {
    await stop(); // a store that cannot open leaves no process behind
    throw err;
  }

  // This daemon is the store's only user: a notification is delivered in process.
  const listeners = createListeners();

  return {
    db: dbFor(null),
    shared: false,
    listen: (channel, fn) => listeners.add(channel, fn),
    notify: async (channel, payload) => {
      queueMicrotask(() => listeners.deliver(channel, payload));
    },
    close: once(async () => {
      const exited = new Promise<void>((r) => worker.once('exit', () => r()));
      if (!gone) await call({ op: 'close' }).catch((err: unknown) => log.error({ err }, 'closing the store failed'));
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
      await stop();
      log.info('store closed');
    }),
  };
}
