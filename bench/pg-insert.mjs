// Baseline for output ingestion on a team store: a bare node-postgres insert of `lines` rows of 80
// bytes, `batch` rows per statement (the multi-row form the daemon uses), into a table of its own
// in the database at `url`. In a process of its own, as the daemon is. Prints the insert's
// milliseconds. Usage: pg-insert.mjs <url> <lines> <batch>
import pg from 'pg';

const [url, linesArg, batchArg] = process.argv.slice(2);
const lines = Number(linesArg);
const batch = Number(batchArg);
const db = new pg.Client({ connectionString: url });
await db.connect();
const table = `bare_lines_${process.pid}`;
await db.query(`CREATE TABLE ${table} (session_id uuid, seq int, stream text, text text, at timestamptz, PRIMARY KEY (session_id, seq))`);
const sid = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const t0 = performance.now();
for (let start = 1; start <= lines; start += batch) {
  const n = Math.min(batch, lines - start + 1);
  const texts = Array.from({ length: n }, (_, i) => `line ${start + i}`.padEnd(79));
  const at = new Date().toISOString();
  await db.query('BEGIN');
  await db.query(
    `INSERT INTO ${table} SELECT $1, $2 + o - 1, s, t, a::timestamptz FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(s, t, a, o)`,
    [sid, start, texts.map(() => 'stdout'), texts, texts.map(() => at)],
  );
  await db.query('COMMIT');
}
const ms = performance.now() - t0;
await db.query(`DROP TABLE ${table}`);
await db.end();
process.stdout.write(`${ms}\n`);
