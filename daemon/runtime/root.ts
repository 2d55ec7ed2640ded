import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The package's root folder, found from this module's location: the same answer from the
// sources (tests, through tsx) and from the build in dist/.
function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'grove') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no grove package.json above ${from}`);
  }
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

// The built JavaScript of a source file (`workers/index.js`): code that runs in another thread
// or process always runs from dist/, whoever starts it.
export function built(rel: string): string {
  return path.join(ROOT, 'dist', rel);
}

export const VERSION: string = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
