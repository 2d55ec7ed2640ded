// The store's worker thread. PGlite runs its queries synchronously in WebAssembly: on the main
// thread every insert of a busy session would hold up every HTTP answer. Here it has a thread
// of its own; the main thread sends queries and transactions as messages (db.ts), typed once
// in protocol.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pendingMigrations, RECORD_MIGRATION, SCHEMA_MIGRATIONS_DDL } from './migrations.ts';
import type { StoreReply, StoreRequest, StoreWorkerData, WireError } from './protocol.ts';

type Queryable = Pick<PGlite, 'query'> | Transaction;
type QueryRequest = Extract<StoreRequest, { op: 'query' }>;
type EndRequest = Extract<StoreRequest, { op: 'end' }>;

const port = parentPort!;
// An open handle from the first moment: a worker whose event loop runs empty blocks until V8's
// background work is done before it looks at its messages again.
const keepAlive = setInterval(() => {}, 2 ** 30);
const { pgdata, conf, migrations } = workerData as StoreWorkerData;

const send = (m: StoreReply) => port.postMessage(m);
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

let pg: PGlite | undefined;
try {
  pg = new PGlite({ dataDir: pgdata, postgresqlconf: conf });
  await pg.waitReady;
  await migrate(pg); // its first query is the readiness check: the listeners open only after it
} catch (err) {
  await pg?.close().catch(() => {});
  send({ type: 'failed', error: toWire(err) });
  port.close();
  process.exit(1);
}
const db = pg;

async function runQuery(q: Queryable, req: QueryRequest): Promise<void> {
  try {
    const r = await q.query(req.sql, req.params);
    send({ type: 'reply', id: req.id, ok: true, rows: r.rows, ...(r.affectedRows === undefined ? {} : { affectedRows: r.affectedRows }) });
  } catch (err) {
    send({ type: 'reply', id: req.id, ok: false, error: toWire(err) });
  }
}

// Open transactions, each waiting in its callback for the next statement from the main thread.
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
port.on('message', (req: StoreRequest) => {
  if (req.op === 'end' || (req.op === 'query' && req.tx !== null)) return deliver(req.tx!, req);
  if (req.op === 'query') return void runQuery(db, req);
  if (req.op === 'begin') return begin(req);
  if (req.op === 'close' && !closing) {
    closing = true;
    void (async () => {
      try {
        await db.exec('CHECKPOINT');
      } catch (err) {
        log('error', { err: toWire(err) }, 'checkpoint at close failed');
      }
      await db.close();
      send({ type: 'reply', id: req.id, ok: true });
      clearInterval(keepAlive);
      port.close();
      // PGlite leaves handles that keep the thread alive, and terminate() from outside then
      // waits on them for seconds: the thread ends itself once the store is closed.
      process.exit(0);
    })();
  }
});

send({ type: 'ready' });
