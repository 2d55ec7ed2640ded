// A test reporter: at the end of a run, the test files whose tests took longest in all (the sum
// of their top-level tests' durations; a file's start and its last cleanup are not counted),
// where CI time goes (docs/testing.md). GROVE_TEST_SLOWEST sets how many (default 15).
export default async function* slowest(source) {
  const files = new Map();
  for await (const { type, data } of source) {
    if ((type !== 'test:pass' && type !== 'test:fail') || !data?.file || data.nesting !== 0) continue;
    const f = files.get(data.file) ?? { sum: 0, tests: 0, failed: 0 };
    files.set(data.file, f);
    f.sum += data.details?.duration_ms ?? 0;
    f.tests += 1;
    if (type === 'test:fail') f.failed += 1;
  }
  const rows = [...files].map(([file, f]) => ({ file: file.replace(process.cwd() + '/', ''), ...f }));
  rows.sort((a, b) => b.sum - a.sum);
  const n = Number(process.env.GROVE_TEST_SLOWEST ?? 15);
  const all = rows.reduce((s, r) => s + r.sum, 0);
  yield `\nthe ${Math.min(n, rows.length)} slowest of ${rows.length} files (their tests' durations summed; all files: ${(all / 1000).toFixed(0)} s)\n`;
  for (const r of rows.slice(0, n)) yield `${(r.sum / 1000).toFixed(1).padStart(7)} s  ${String(r.tests).padStart(3)} tests${r.failed ? ` (${r.failed} failed)` : ''}  ${r.file}\n`;
}
