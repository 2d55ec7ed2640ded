// The store's process. PGlite runs its queries synchronously in WebAssembly: in the daemon every
// insert of a busy session would hold up every HTTP answer, and its memory would make every fork
// of the daemon dear (pglite.ts). Here it has a process of its own; the daemon sends queries and
// transactions as messages over the IPC channel, typed once in protocol.ts.
// Usage: worker.js <StoreWorkerData as JSON>, forked with an IPC channel.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { acquireDataLock, LockHeldError, type DataLock } from '../../runtime/lock.ts';
import { retrying } from '../../runtime/retry.ts';
import { createStoreDir } from './create.ts';
import { pendingMigrations, RECORD_MIGRATION, SCHEMA_MIGRATIONS_DDL } from './migrations.ts';
import type { StoreReply, StoreRequest, StoreWorkerData, WireError } from './protocol.ts';
import { runInTurn } from '../store.ts';

type Queryable = Pick<PGlite, 'query'> | Transaction;
type QueryRequest = Extract<StoreRequest, { op: 'query' }>;
type EndRequest = Extract<StoreRequest, { op: 'end' }>;

const { pgdata, conf, migrations, prepared } = JSON.parse(process.argv[2] ?? '{}') as StoreWorkerData;
// The daemon gone (its channel closed, a kill -9 included): the store ends at once, as it would
// have with the daemon's process; PGlite replays its WAL at the next open.
process.on('disconnect', () => process.exit(0));

// A reply to a daemon that is gone is dropped: the process is ending (above).
const send = (m: StoreReply) => {
  if (process.connected) process.send!(m);
};
// The last message, then the end: exit only once it is written.
const sendThenExit = (m: StoreReply, code: number) => (process.connected ? process.send!(m, () => process.exit(code)) : process.exit(code));
const log = (level: 'info' | 'error', obj: Record<string, unknown>, msg: string) => send({ type: 'log', level, obj, msg });
// An error crosses the thread boundary as data: its SQLSTATE or errno code must survive.
const toWire = (err: unknown): WireError => {
  const e = err as { message?: unknown; code?: unknown } | null;
  return {
    message: typeof e?.message === 'string' ? e.message : String(err),
    code: typeof e?.code === 'string' ? e.code : undefined,
  };
};

// Applies the migrations not yet applied, each in its own transaction, recording each.
async function migrate(pg: PGlite): Promise<void> {
  await pg.exec(SCHEMA_MIGRATIONS_DDL);
  const applied = (await pg.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version);
  for (const m of pendingMigrations(migrations, applied)) {
    await pg.transaction(async (tx) => {
      await tx.exec(m.sql);
      await tx.query(RECORD_MIGRATION, [m.version, m.file]);
    });
    log('info', { migration: m.file }, 'migration applied');
  }
}

// Never two PGlites on one folder: the store of a daemon killed a moment ago may still be in the
// query it was running when its channel closed. Its lock is waited for (a process's end sends no
// event here), then that process is killed and its lock taken over.
async function lockStore(): Promise<DataLock> {
  const dir = path.dirname(pgdata);
  const held = (err: unknown) => err instanceof LockHeldError;
  try {
    return await retrying(async () => acquireDataLock(dir, 'store.lock'), { policy: { delayMs: 50, tries: 100 }, retryable: held });
  } catch (err) {
    if (!(err instanceof LockHeldError) || err.pid === 0) throw err;
    process.kill(err.pid, 'SIGKILL');
    return retrying(async () => acquireDataLock(dir, 'store.lock'), { policy: { delayMs: 50, tries: 20 }, retryable: held });
  }
}

let pg: PGlite | undefined;
let lock: DataLock | undefined;
try {
  // PGlite's WebAssembly compiles on V8's own threads while this one takes the lock and, at a
  // first start, makes the folder: the two are most of a start's wait.
  const wasm = WebAssembly.compile(readFileSync(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'))));
  wasm.catch(() => {}); // awaited below, after the lock, whose failure comes first
  lock = await lockStore();
  await createStoreDir(pgdata, prepared, (obj, msg) => log('info', obj, msg));
  pg = new PGlite({ dataDir: pgdata, postgresqlconf: conf, pgliteWasmModule: await wasm });
  await pg.waitReady;
  await migrate(pg); // its first query is the readiness check: the listeners open only after it
} catch (err) {
  await pg?.close().catch(() => {});
  await lock?.close();
  sendThenExit({ type: 'failed', error: toWire(err) }, 1);
  await new Promise(() => {}); // until the exit above
}
const db = pg!;

async function runQuery(q: Queryable, req: QueryRequest): Promise<void> {
  try {
    const r = await q.query(req.sql, req.params);
    send({ type: 'reply', id: req.id, ok: true, rows: r.rows, ...(r.affectedRows === undefined ? {} : { affectedRows: r.affectedRows }) });
  } catch (err) {
    send({ type: 'reply', id: req.id, ok: false, error: toWire(err) });
  }
}

async function runBatch(req: Extract<StoreRequest, { op: 'batch' }>): Promise<void> {
  try {
    await db.transaction((tx) => runInTurn(tx, req.statements));
    send({ type: 'reply', id: req.id, ok: true });
  } catch (err) {
    send({ type: 'reply', id: req.id, ok: false, error: toWire(err) });
  }
}

// Open transactions, each waiting in its callback for the next statement from the daemon.
interface OpenTx {
  inbox: Array<QueryRequest | EndRequest>;
  wake: (() => void) | null;
}
const txs = new Map<number, OpenTx>();
let nextTx = 1;
const ROLLBACK = Symbol('rollback');

function begin(req: Extract<StoreRequest, { op: 'begin' }>): void {
  const txId = nextTx++;
  const open: OpenTx = { inbox: [], wake: null };
  txs.set(txId, open);
  const next = async () => {
    while (open.inbox.length === 0) await new Promise<void>((r) => (open.wake = r));
    return open.inbox.shift()!;
  };
  let endId = req.id;
  db.transaction(async (tx) => {
    send({ type: 'reply', id: req.id, ok: true, tx: txId });
    for (;;) {
      const m = await next();
      if (m.op === 'end') {
        endId = m.id;
        if (!m.commit) throw ROLLBACK;
        return;
      }
      await runQuery(tx, m);
    }
  })
    .then(
      () => send({ type: 'reply', id: endId, ok: true }),
      (err: unknown) => send(err === ROLLBACK ? { type: 'reply', id: endId, ok: true } : { type: 'reply', id: endId, ok: false, error: toWire(err) }),
    )
    .finally(() => txs.delete(txId));
}

function deliver(txId: number, req: QueryRequest | EndRequest): void {
  const open = txs.get(txId);
  if (!open) return send({ type: 'reply', id: req.id, ok: false, error: { message: `no open transaction ${txId}`, code: undefined } });
  open.inbox.push(req);
  open.wake?.();
  open.wake = null;
}

let closing = false;
process.on('message', (req: StoreRequest) => {
  if (req.op === 'end' || (req.op === 'query' && req.tx !== null)) return deliver(req.tx!, req);
  if (req.op === 'query') return void runQuery(db, req);
  if (req.op === 'begin') return begin(req);
  if (req.op === 'batch') return void runBatch(req);
  if (req.op === 'close' && !closing) {
    closing = true;
    void (async () => {
      try {
        await db.exec('CHECKPOINT');
      } catch (err) {
        log('error', { err: toWire(err) }, 'checkpoint at close failed');
      }
      await db.close();
      await lock!.close();
      // PGlite leaves handles that would keep the process alive: it ends itself once closed.
      sendThenExit({ type: 'reply', id: req.id, ok: true }, 0);
    })();
  }
});

send({ type: 'ready' });
