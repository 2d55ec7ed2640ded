import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The package's root folder, found from this module's location: the same answer whether the
// daemon runs from its TypeScript sources or from the start-up bundle (daemon/start.mjs),
// whose modules all share the bundle's own URL.
function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'grove') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no grove package.json above ${from}`);
  }
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
