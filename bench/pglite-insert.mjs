// Baseline for output ingestion: a bare PGlite bulk insert of `lines` rows of 80 bytes, `batch`
// rows per statement, into a copy of the store. In a process of its own, as the daemon's store
// is: in the bench's process, its WebAssembly blocked the bench's event loop, so its keep-alive
// connections to the daemon went stale unseen. Prints the insert's milliseconds.
// Usage: pglite-insert.mjs <pgdata> <settings as JSON> <lines> <batch>
import { PGlite } from '@electric-sql/pglite';

const [dir, conf, linesArg, batchArg] = process.argv.slice(2);
const lines = Number(linesArg);
const batch = Number(batchArg);
const db = new PGlite({ dataDir: dir, postgresqlconf: JSON.parse(conf) });
await db.waitReady;
await db.exec('CREATE TABLE l (session_id uuid, seq int, stream text, text text, at timestamptz, PRIMARY KEY (session_id, seq))');
const sid = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const t0 = performance.now();
for (let start = 1; start <= lines; start += batch) {
  const n = Math.min(batch, lines - start + 1);
  const texts = Array.from({ length: n }, (_, i) => `line ${start + i}`.padEnd(79));
  const at = new Date().toISOString();
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO l SELECT $1, $2 + o - 1, s, t, a::timestamptz FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(s, t, a, o)`,
      [sid, start, texts.map(() => 'stdout'), texts, texts.map(() => at)],
    );
  });
}
const ms = performance.now() - t0;
await db.close();
process.stdout.write(`${ms}\n`);
