// `npm run bench [-- --quick]`: grove against the raw limits on this machine, as ratios.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchStart } from './start.ts';
import { round } from './stats.ts';

const quick = process.argv.includes('--quick');

const results = {
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, mem_gb: round(os.totalmem() / 2 ** 30, 1), node: process.version },
  quick,
  at: new Date().toISOString(),
  start: await benchStart(quick ? { runs: 3, newStoreRuns: 1 } : { runs: 10, newStoreRuns: 3 }),
};

writeFileSync(path.join(import.meta.dirname, 'results.json'), JSON.stringify(results, null, 2) + '\n');
console.log(JSON.stringify(results, null, 2));

const rows: Array<[string, string, string, string]> = [
  ['start, existing store (ms, median)', fmt(results.start.start_existing_store_ms.grove.median), fmt(results.start.start_existing_store_ms.baseline.median), fmt(results.start.start_existing_store_ms.ratio)],
  ['start, new store (ms, median)', fmt(results.start.start_new_store_ms.grove.median), fmt(results.start.start_new_store_ms.baseline.median), fmt(results.start.start_new_store_ms.ratio)],
  ['idle RSS (MB, median)', fmt(results.start.idle_rss_mb.grove.median), fmt(results.start.idle_rss_mb.baseline.median), fmt(results.start.idle_rss_mb.ratio)],
];
console.log('\n| measure | grove | raw baseline | ratio |\n|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);

function fmt(n: number): string {
  return String(round(n, n < 10 ? 2 : 0));
}
