// `npm run build` (after tsc): the dashboard (DESIGN §12) bundled by esbuild into dist/ui, which
// the daemon serves at /: index.html naming the hashed script and stylesheet under /assets/
// (cached for good), no inline script, for the page's CSP. What the page imports only when it
// needs it (the terminal's xterm, DESIGN §21) is a hashed chunk beside them.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const UI = import.meta.dirname;
const OUT = path.join(UI, '..', 'dist', 'ui');

rmSync(OUT, { recursive: true, force: true });
mkdirSync(path.join(OUT, 'assets'), { recursive: true });
const result = await build({
  entryPoints: [path.join(UI, 'src', 'main.tsx')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  outdir: path.join(OUT, 'assets'),
  entryNames: 'index-[hash]',
  splitting: true,
  chunkNames: 'chunk-[hash]',
  metafile: true,
  logLevel: 'warning',
});
// The entry's script and its stylesheet, as the page names them.
const entry = Object.entries(result.metafile.outputs).find(([f, o]) => f.endsWith('.js') && o.entryPoint !== undefined);
const [js, css] = [entry?.[0], entry?.[1].cssBundle].map((file) => {
  if (!file) throw new Error(`the dashboard build made no entry script or stylesheet`);
  return `/assets/${path.basename(file)}`;
});
const page = readFileSync(path.join(UI, 'index.html'), 'utf8').replace(
  '<script type="module" src="/src/main.tsx"></script>',
  `<script type="module" src="${js}"></script>\n    <link rel="stylesheet" href="${css}" />`,
);
if (!page.includes(js!)) throw new Error('ui/index.html has no entry script to replace');
writeFileSync(path.join(OUT, 'index.html'), page);
copyFileSync(path.join(UI, 'public', 'favicon.svg'), path.join(OUT, 'favicon.svg'));
