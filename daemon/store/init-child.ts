// Runs initdb for a new store in its own process: initdb peaks near 800 MB, which a
// process gives back to the system on exit and a thread does not.
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_CONF } from './pglite-options.ts';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: init-child <pgdata dir>\n');
  process.exit(2);
}
const db = new PGlite({ dataDir: dir, postgresqlconf: PGLITE_CONF });
await db.waitReady;
await db.exec('CHECKPOINT');
await db.close();
