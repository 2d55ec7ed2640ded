// Runs initdb for a new store in its own process (init.ts): initdb's peak memory goes back to
// the system when this process exits, which a thread's would not.
// Usage: init-child.js <pgdata dir> <PGlite settings as a JSON array>
import { PGlite } from '@electric-sql/pglite';

const [dir, conf] = process.argv.slice(2);
if (!dir || !conf) {
  process.stderr.write('usage: init-child.js <pgdata dir> <settings as JSON>\n');
  process.exit(2);
}
const db = new PGlite({ dataDir: dir, postgresqlconf: JSON.parse(conf) as string[] });
await db.waitReady;
await db.exec('CHECKPOINT');
await db.close();
