// Baseline for output ingestion: a bare PGlite bulk insert of `lines` rows of 80 bytes, `batch`
// rows per statement, into a copy of the store. In a process of its own, as the daemon's store
// is: in the bench's process, its WebAssembly blocked the bench's event loop, so its keep-alive
// connections to the daemon went stale unseen. Prints the insert's milliseconds.
// Usage: pglite-insert.mjs <pgdata> <settings as JSON> <lines> <batch>
import { PGlite } from '@electric-sql/pglite';
import { BARE_TABLE, bareBatches } from './bare-lines.mjs';

const [dir, conf, linesArg, batchArg] = process.argv.slice(2);
const lines = Number(linesArg);
const batch = Number(batchArg);
const db = new PGlite({ dataDir: dir, postgresqlconf: JSON.parse(conf) });
await db.waitReady;
await db.exec(`CREATE TABLE l ${BARE_TABLE}`);
const t0 = performance.now();
for (const { sql, params } of bareBatches('l', lines, batch)) await db.transaction((tx) => tx.query(sql, params));
const ms = performance.now() - t0;
await db.close();
process.stdout.write(`${ms}\n`);
