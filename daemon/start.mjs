// `npm start` and `grove daemon`: runs the daemon from a bundle of its TypeScript sources, made
// once per source version with esbuild (tsx's own compiler) and kept in node_modules/.cache.
// Loading ~70 TypeScript modules through tsx's loader thread took most of a second at every
// start; the bundle loads like plain JavaScript. Development and tests run the sources.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { markInUse, pruneBundles } from './bundle-cache.mjs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Every source the bundle is made of, with the lock file (dependency versions) and this file
// (the build options), in a stable order.
function sources() {
  const out = [path.join(root, 'package-lock.json'), fileURLToPath(import.meta.url)];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(p);
    }
  };
  walk(path.join(root, 'daemon'));
  walk(path.join(root, 'schemas'));
  walk(path.join(root, 'workers'));
  return out;
}

const hash = createHash('sha256');
for (const file of sources()) hash.update(file).update(readFileSync(file));
const cache = path.join(root, 'node_modules', '.cache', 'grove');
const dir = path.join(cache, `daemon-${hash.digest('hex').slice(0, 16)}`);

// Marked before it is used: another start prunes only folders no live daemon has marked
// (bundle-cache.mjs). A folder pruned between the check and the mark is built again.
let marked = false;
if (existsSync(dir)) {
  try {
    markInUse(dir);
    marked = true;
  } catch {
    // pruned meanwhile: built again below
  }
}
if (!marked) {
  const { build } = await import('esbuild');
  mkdirSync(cache, { recursive: true });
  const tmp = `${dir}.${process.pid}.tmp`;
  await build({
    // The daemon, and the code of the worker pool's threads (loaded by Piscina from this folder).
    entryPoints: { main: path.join(root, 'daemon', 'main.ts'), worker: path.join(root, 'workers', 'index.ts') },
    outdir: tmp,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Dynamic imports stay separate chunks, with their dependencies: the first chunk takes the
    // lock and starts the store before the rest (Ajv, the routes, undici…) is even loaded.
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Dependencies are bundled too: resolving and compiling hundreds of files of undici, execa,
    // TypeBox and Ajv one by one took ~0.3 s of every start. Left out are those that find
    // their own files at run time (PGlite its WebAssembly, Piscina and pino their worker
    // scripts) and the build tools.
    external: ['@electric-sql/pglite', 'piscina', 'pino', 'pino-pretty', 'tsx', 'esbuild'],
    // Bundled CommonJS (Ajv, undici) calls require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __groveRequire } from 'node:module'; const require = __groveRequire(import.meta.url);" },
    logLevel: 'error',
  });
  markInUse(tmp); // the mark moves with the folder
  try {
    renameSync(tmp, dir); // atomic: a daemon starting at the same moment sees all or nothing
  } catch (err) {
    if (!existsSync(dir)) throw err; // another start made it first
    rmSync(tmp, { recursive: true, force: true });
    markInUse(dir);
  }
}
// Bundles of older sources go once no daemon runs from them.
pruneBundles(cache, dir);

await import(pathToFileURL(path.join(dir, 'main.mjs')).href);
