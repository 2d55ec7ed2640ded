import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';

// Where a read keeps what it makes (DESIGN §9): a folder of its own under the daemon's scratch
// folder (`<data>/scratch`, emptied at each start), holding its index copies and an object
// directory. Every git call of the read writes its objects (the working tree's blobs and
// trees, commits of uncommitted work, merge-tree's trees) there and finds the repository's
// through GIT_ALTERNATE_OBJECT_DIRECTORIES, so a read writes nothing into the repository.
export interface Scratch {
  /** the environment of every git call of the read */
  env: Record<string, string>;
  /** a private copy of an index file, for GIT_INDEX_FILE */
  indexCopy(index: string): string;
}

// A private (0700) folder under `root`; `dispose` removes it and all it holds.
export function privateDir(root: string): { dir: string; dispose(): void } {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(path.join(root, 'r-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

// A copy of an index file at `file`, readable by its owner only (none when there is no index
// yet: git then starts from an empty one).
export function copyIndex(index: string, file: string): string {
  try {
    copyFileSync(index, file);
    chmodSync(file, 0o600);
  } catch {
    // no index yet
  }
  return file;
}

// A list entry of GIT_ALTERNATE_OBJECT_DIRECTORIES: quoted (C style) when it holds the separator.
function alternate(dir: string): string {
  return dir.includes(':') || dir.startsWith('"') ? JSON.stringify(dir) : dir;
}

// Runs `fn` with a scratch for the repository that `checkout` belongs to, removed after, also on
// failure. Linked worktrees keep their objects in the common dir: that is the one read.
export async function withScratch<T>(root: string, checkout: string, fn: (s: Scratch) => Promise<Result<T>>, signal?: AbortSignal): Promise<Result<T>> {
  const objects = await git(checkout, ['rev-parse', '--path-format=absolute', '--git-path', 'objects'], { signal });
  if (objects.exitCode !== 0) return fail('INTERNAL', `git rev-parse failed: ${firstLine(objects.stderr)}`);
  const { dir, dispose } = privateDir(root);
  try {
    mkdirSync(path.join(dir, 'objects'));
    let copies = 0;
    return await fn({
      env: { GIT_OBJECT_DIRECTORY: path.join(dir, 'objects'), GIT_ALTERNATE_OBJECT_DIRECTORIES: alternate(objects.stdout) },
      indexCopy: (index) => copyIndex(index, path.join(dir, `index-${copies++}`)),
    });
  } finally {
    dispose();
  }
}
