// The store's worker thread. PGlite runs its queries synchronously in WebAssembly: on the main
// thread every insert of a busy session would hold up every HTTP answer. Here it has a thread
// of its own; the main thread sends queries and transactions as messages (db.ts, with the
// message types in protocol.ts). Plain JavaScript on purpose: a worker thread does not get
// the main thread's tsx loader, and registering another one costs start time and memory.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const port = parentPort;
// An open handle from the first moment: a worker whose event loop runs empty, as this one's does
// when its top-level code ends, blocks until V8's background work is done (WebAssembly tier-up
// of PGlite, ~0.2 s at start) before it looks at its messages again.
const keepAlive = setInterval(() => {}, 2 ** 30);
/** @type {{ pgdata: string; conf: string[]; migrations: string }} */
const { pgdata, conf, migrations } = workerData;

const send = (m) => port.postMessage(m);
const log = (level, obj, msg) => send({ type: 'log', level, obj, msg });
// An error crosses the thread boundary as data: its SQLSTATE or errno code must survive.
const toWire = (err) => ({
  message: typeof err?.message === 'string' ? err.message : String(err),
  code: typeof err?.code === 'string' ? err.code : undefined,
});

// The versions applied so far. The table is created only when it is missing: even with IF NOT
// EXISTS, a CREATE on the first statement of every start cost 15-25 ms.
async function appliedVersions(pg) {
  try {
    return (await pg.query('SELECT version FROM schema_migrations')).rows.map((r) => r.version);
  } catch (err) {
    if (err?.code !== '42P01') throw err; // undefined_table: a new store
  }
  await pg.exec(`CREATE TABLE schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  return [];
}

// Applies migrations/NNNN_name.sql in order, each in its own transaction, recording each.
async function migrate(pg) {
  const applied = new Set(await appliedVersions(pg));
  const files = readdirSync(migrations)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    if (applied.has(version)) continue;
    const sql = readFileSync(path.join(migrations, file), 'utf8');
    await pg.transaction(async (tx) => {
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file]);
    });
    log('info', { migration: file }, 'migration applied');
  }
}

let pg;
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

async function runQuery(q, req) {
  try {
    const r = await q.query(req.sql, req.params);
    send({ type: 'reply', id: req.id, ok: true, rows: r.rows, ...(r.affectedRows === undefined ? {} : { affectedRows: r.affectedRows }) });
  } catch (err) {
    send({ type: 'reply', id: req.id, ok: false, error: toWire(err) });
  }
}

// Open transactions, each waiting in its callback for the next statement from the main thread.
const txs = new Map();
let nextTx = 1;
const ROLLBACK = Symbol('rollback');

function begin(req) {
  const txId = nextTx++;
  const open = { inbox: [], wake: null };
  txs.set(txId, open);
  const next = async () => {
    while (open.inbox.length === 0) await new Promise((r) => (open.wake = r));
    return open.inbox.shift();
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
      await runQuery(tx, m);
    }
  })
    .then(
      () => send({ type: 'reply', id: endId, ok: true }),
      (err) => send(err === ROLLBACK ? { type: 'reply', id: endId, ok: true } : { type: 'reply', id: endId, ok: false, error: toWire(err) }),
    )
    .finally(() => txs.delete(txId));
}

function deliver(txId, req) {
  const open = txs.get(txId);
  if (!open) return send({ type: 'reply', id: req.id, ok: false, error: { message: `no open transaction ${txId}` } });
  open.inbox.push(req);
  open.wake?.();
  open.wake = null;
}

let closing = false;
port.on('message', (req) => {
  if ((req.op === 'query' && req.tx !== null) || req.op === 'end') return deliver(req.tx, req);
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
      clearInterval(keepAlive);
      port.close();
    })();
  }
});

send({ type: 'ready' });
