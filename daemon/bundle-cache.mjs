// The start-up bundles in node_modules/.cache/grove (see start.mjs), one folder per source
// version. A daemon reads chunks from its folder long after its start (execa at the first git
// call, the OpenAPI document at its first request), so a folder is removed only once no daemon
// runs from it: each start marks its folder with its pid. Plain JavaScript, for start.mjs.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const MARK = 'in-use.';

// True while `pid` runs (EPERM: it runs, as another user).
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

// The pids marked in `dir` whose process still runs; the marks of the others are removed.
function liveMarks(dir) {
  const live = [];
  for (const f of readdirSync(dir)) {
    if (!f.startsWith(MARK)) continue;
    const pid = Number(f.slice(MARK.length));
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) live.push(pid);
    else rmSync(path.join(dir, f), { force: true });
  }
  return live;
}

// Marks `dir` as the bundle this process runs from.
export function markInUse(dir, pid = process.pid) {
  writeFileSync(path.join(dir, `${MARK}${pid}`), '');
}

// Removes the bundles of other source versions that no running daemon uses, and stale marks.
export function pruneBundles(cache, keep) {
  for (const name of readdirSync(cache)) {
    const dir = path.join(cache, name);
    if (!name.startsWith('daemon-') || name.endsWith('.tmp')) continue;
    const live = liveMarks(dir);
    if (dir !== keep && live.length === 0) rmSync(dir, { recursive: true, force: true });
  }
}
