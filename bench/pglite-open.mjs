// Baseline for start-up: a bare node process (plain JavaScript, no loader) that opens a PGlite
// store (or makes a new one) with the daemon's settings, answers one query, and reports
// readiness on stdout. The settings come as JSON in argv[3].
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
const db = new PGlite({ dataDir: dir, postgresqlconf: JSON.parse(process.argv[3]) });
await db.waitReady;
await db.query('SELECT 1');
process.stdout.write('ready\n');
// Stay up until told to stop, so that the idle RSS can be read like the daemon's.
process.stdin.resume();
process.stdin.on('end', async () => {
  await db.close();
  process.exit(0);
});
