// Runs initdb for a new store in its own process: initdb peaks near 800 MB, which a
// process gives back to the system on exit and a thread does not. Plain JavaScript, like the
// store's thread: started through tsx, this process took 0.3-0.9 s longer.
// Usage: init-child.mjs <pgdata dir> <PGlite settings as a JSON array>
import { PGlite } from '@electric-sql/pglite';

const [dir, conf] = process.argv.slice(2);
if (!dir || !conf) {
  process.stderr.write('usage: init-child.mjs <pgdata dir> <settings as JSON>\n');
  process.exit(2);
}
const db = new PGlite({ dataDir: dir, postgresqlconf: JSON.parse(conf) });
await db.waitReady;
await db.exec('CHECKPOINT');
await db.close();
