import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FSWatcher, watch } from 'chokidar';
import { git } from '../git/run.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { stamp } from '../runtime/stamp.ts';
import { createSignal, type Listen } from '../runtime/signal.ts';

// Past chokidar's throttle of changes to one file, which drops the later ones.
const SETTLE_MS = 100;

interface Watched {
  w: FSWatcher;
  /** HEAD, packed-refs and the ref file of HEAD's branch when the watch began */
  files: string[];
}

// The branch HEAD names, as `refs/heads/...`, or null (detached, unreadable).
function headRef(gitDir: string): string | null {
  try {
    const m = /^ref: (refs\/heads\/\S+)\s*$/.exec(readFileSync(path.join(gitDir, 'HEAD'), 'utf8'));
    return m ? m[1]! : null;
  } catch {
    return null;
  }
}

// The files that say where the base is: HEAD, packed-refs, and the ref file of HEAD's branch.
function baseFiles(gitDir: string, commonDir: string): string[] {
  const ref = headRef(gitDir);
  return [path.join(gitDir, 'HEAD'), path.join(commonDir, 'packed-refs'), ...(ref ? [path.join(commonDir, ...ref.split('/'))] : [])];
}

const stamps = (files: string[]) => files.map((f) => `${f}=${stamp(f)}`).join('\n');

// Watches where each project's default base (its checkout's HEAD: DESIGN §16) can move: the
// HEAD of its git dir, its branch's ref file and packed-refs in the common git dir (a linked
// worktree's refs are its main repository's; `git gc` moves a ref into packed-refs). Only those
// files and the folders on their way are watched, never other branches or objects, so grove's
// own branches do not wake it. A change says the base may have moved; the listener checks.
export function createBaseWatch(opts: { log: Logger }) {
  const { log } = opts;
  const watched = new Map<string, Promise<Watched | null>>();
  const settling = new Map<string, NodeJS.Timeout>();
  const changes = createSignal<string>();
  let closed = false;

  // Told at once, and once more after chokidar's throttle if the files changed again meanwhile
  // (a second commit right after the first, whose event chokidar drops).
  function moved(root: string, files: string[]): void {
    const seen = stamps(files);
    changes.changed(root);
    clearTimeout(settling.get(root));
    settling.set(
      root,
      setTimeout(() => {
        settling.delete(root);
        if (watched.has(root) && stamps(files) !== seen) changes.changed(root);
      }, SETTLE_MS).unref(),
    );
  }

  // `before`: the files' stamps when the caller last looked (a restart); a change between then
  // and the watch being on is told at once.
  async function start(root: string, before?: string): Promise<Watched | null> {
    const res = await git(root, ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir']);
    const [gitDir = '', commonDir = ''] = res.stdout.split('\n');
    if (res.exitCode !== 0 || gitDir === '' || commonDir === '') {
      log.warn({ root, err: res.stderr.trim() }, 'cannot watch the base of a project: git rev-parse failed');
      return null;
    }
    const files = baseFiles(gitDir, commonDir);
    const since = before ?? stamps(files);
    const head = files[0]!;
    const wanted = new Set(files);
    // The folders on the way to the ref file (a branch named a/b is in refs/heads/a/).
    const ways = new Set<string>([gitDir, commonDir]);
    for (let d = path.dirname(files[2] ?? commonDir); d.startsWith(commonDir) && d !== commonDir; d = path.dirname(d)) ways.add(d);
    const w = watch([...new Set([gitDir, commonDir])], { ignoreInitial: true, ignored: (p: string) => !wanted.has(p) && !ways.has(p) });
    w.on('all', (_event, p) => {
      if (closed || !wanted.has(p)) return;
      moved(root, files);
      // HEAD now on another branch: that branch's ref file is the one to watch.
      const now = baseFiles(gitDir, commonDir);
      if (p === head && now[2] !== files[2]) void restart(root, stamps(now));
    });
    w.on('error', (err) => log.warn({ err, root }, 'base watcher error'));
    await new Promise<void>((resolve) => w.once('ready', () => resolve()));
    if (stamps(files) !== since) moved(root, files);
    return { w, files };
  }

  async function stop(root: string): Promise<void> {
    const entry = watched.get(root);
    watched.delete(root);
    clearTimeout(settling.get(root));
    settling.delete(root);
    await (await entry)?.w.close();
  }

  async function restart(root: string, before: string): Promise<void> {
    await stop(root);
    if (!closed) await watchRoot(root, before);
  }

  function watchRoot(root: string, before?: string): Promise<void> {
    let entry = watched.get(root);
    if (!entry) {
      const started = start(root, before);
      watched.set(root, (entry = started));
      // A project whose git dir could not be read is tried again at its next watch.
      void started.then((e) => {
        if (e === null && watched.get(root) === started) watched.delete(root);
      });
    }
    return entry.then(() => undefined);
  }

  return {
    /** a project root whose default base may have moved */
    changes: changes as Listen<string>,
    /** resolves once the watch is on: a move after that is told */
    watch: (root: string): Promise<void> => (closed ? Promise.resolve() : watchRoot(root)),
    unwatch: (root: string): Promise<void> => stop(root),
    close: once(async () => {
      closed = true;
      await Promise.all([...watched.keys()].map((root) => stop(root)));
    }),
  };
}

export type BaseWatch = ReturnType<typeof createBaseWatch>;
