// Baseline for output ingestion on a team store: a bare node-postgres insert of `lines` rows of 80
// bytes, `batch` rows per statement (the multi-row form the daemon uses), into a table of its own
// in the database at `url`. In a process of its own, as the daemon is. Prints the insert's
// milliseconds. Usage: pg-insert.mjs <url> <lines> <batch>
import pg from 'pg';
import { BARE_TABLE, bareBatches } from './bare-lines.mjs';

const [url, linesArg, batchArg] = process.argv.slice(2);
const lines = Number(linesArg);
const batch = Number(batchArg);
const db = new pg.Client({ connectionString: url });
await db.connect();
const table = `bare_lines_${process.pid}`;
await db.query(`CREATE TABLE ${table} ${BARE_TABLE}`);
const t0 = performance.now();
for (const { sql, params } of bareBatches(table, lines, batch)) {
  await db.query('BEGIN');
  await db.query(sql, params);
  await db.query('COMMIT');
}
const ms = performance.now() - t0;
await db.query(`DROP TABLE ${table}`);
await db.end();
process.stdout.write(`${ms}\n`);
