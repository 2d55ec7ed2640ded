import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { initStoreDir, pgdataDir } from './init.ts';
import { PGLITE_CONF } from './pglite-options.ts';
import { toWire, type StoreReply, type StoreRequest } from './protocol.ts';

// PGlite runs its queries synchronously in WebAssembly: on the main thread every insert of a
// busy session would hold up every HTTP answer. Here it has a thread of its own; the main
// thread sends queries and transactions as messages (daemon/store/db.ts).

const port = parentPort!;
const { dataDir } = workerData as { dataDir: string };
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

function send(m: StoreReply): void {
  port.postMessage(m);
}
function log(level: 'info' | 'warn' | 'error', obj: Record<string, unknown>, msg: string): void {
  send({ type: 'log', level, obj, msg });
}

// Applies migrations/NNNN_name.sql in order, each in its own transaction, recording each.
async function migrate(pg: PGlite): Promise<void> {
  await pg.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied = new Set((await pg.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    if (applied.has(version)) continue;
    const sql = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
    await pg.transaction(async (tx) => {
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file]);
    });
    log('info', { migration: file }, 'migration applied');
  }
}

async function open(): Promise<PGlite> {
  const dir = pgdataDir(dataDir);
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    const t0 = performance.now();
    rmSync(dir, { recursive: true, force: true }); // a half-made folder from a crash during initdb
    await initStoreDir(dir);
    log('info', { dir, ms: Math.round(performance.now() - t0) }, 'new store initialised');
  }
  const pg = new PGlite({ dataDir: dir, postgresqlconf: PGLITE_CONF });
  try {
    await pg.waitReady;
    await migrate(pg);
    await pg.query('SELECT 1'); // readiness: the listeners open only after this answers
  } catch (err) {
    await pg.close().catch(() => {});
    throw err;
  }
  return pg;
}

// An open transaction waits here for its next statement from the main thread.
interface OpenTx {
  inbox: StoreRequest[];
  wake: (() => void) | null;
}

const ROLLBACK = Symbol('rollback');

let pg: PGlite;
try {
  pg = await open();
} catch (err) {
  send({ type: 'failed', error: toWire(err) });
  port.close();
  throw err;
}

const txs = new Map<number, OpenTx>();
let nextTx = 1;

async function runQuery(q: PGlite | Transaction, req: Extract<StoreRequest, { op: 'query' }>): Promise<void> {
  try {
    const r = await q.query(req.sql, req.params);
    send({ type: 'reply', id: req.id, ok: true, rows: r.rows, ...(r.affectedRows === undefined ? {} : { affectedRows: r.affectedRows }) });
  } catch (err) {
    send({ type: 'reply', id: req.id, ok: false, error: toWire(err) });
  }
}

function begin(req: Extract<StoreRequest, { op: 'begin' }>): void {
  const txId = nextTx++;
  const open: OpenTx = { inbox: [], wake: null };
  txs.set(txId, open);
  const next = async (): Promise<StoreRequest> => {
    while (open.inbox.length === 0) await new Promise<void>((r) => (open.wake = r));
    return open.inbox.shift()!;
  };
  let endId = req.id;
  pg.transaction(async (tx) => {
    send({ type: 'reply', id: req.id, ok: true, tx: txId });
    for (;;) {
      const m = await next();
      if (m.op === 'end') {
        endId = m.id;
        if (!m.commit) throw ROLLBACK;
        return;
      }
      if (m.op === 'query') await runQuery(tx, m);
    }
  })
    .then(
      () => send({ type: 'reply', id: endId, ok: true }),
      (err: unknown) => send(err === ROLLBACK ? { type: 'reply', id: endId, ok: true } : { type: 'reply', id: endId, ok: false, error: toWire(err) }),
    )
    .finally(() => txs.delete(txId));
}

let closing = false;
port.on('message', (req: StoreRequest) => {
  if (req.op === 'query' && req.tx !== null) return deliver(req.tx, req);
  if (req.op === 'end') return deliver(req.tx, req);
  if (req.op === 'query') return void runQuery(pg, req);
  if (req.op === 'begin') return begin(req);
  if (req.op === 'close' && !closing) {
    closing = true;
    void (async () => {
      try {
        await pg.exec('CHECKPOINT');
      } catch (err) {
        log('error', { err: toWire(err) }, 'checkpoint at close failed');
      }
      await pg.close();
      send({ type: 'reply', id: req.id, ok: true });
      port.close();
    })();
  }
});

function deliver(txId: number, req: StoreRequest): void {
  const open = txs.get(txId);
  if (!open) return send({ type: 'reply', id: req.id, ok: false, error: { message: `no open transaction ${txId}`, code: undefined } });
  open.inbox.push(req);
  open.wake?.();
  open.wake = null;
}

send({ type: 'ready' });
