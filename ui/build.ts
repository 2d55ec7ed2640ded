// `npm run build` (after tsc): the dashboard (DESIGN §12) bundled by esbuild into dist/ui, which
// the daemon serves at /: index.html naming the hashed script and stylesheet under /assets/
// (cached for good), no inline script, for the page's CSP.
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
  metafile: true,
  logLevel: 'warning',
});
// The script and its stylesheet, as the page names them.
const [js, css] = ['.js', '.css'].map((ext) => {
  const file = Object.keys(result.metafile.outputs).find((f) => f.endsWith(ext));
  if (!file) throw new Error(`the dashboard build made no ${ext} file`);
  return `/assets/${path.basename(file)}`;
});
const page = readFileSync(path.join(UI, 'index.html'), 'utf8').replace(
  '<script type="module" src="/src/main.tsx"></script>',
  `<script type="module" src="${js}"></script>\n    <link rel="stylesheet" href="${css}" />`,
);
if (!page.includes(js!)) throw new Error('ui/index.html has no entry script to replace');
writeFileSync(path.join(OUT, 'index.html'), page);
copyFileSync(path.join(UI, 'public', 'favicon.svg'), path.join(OUT, 'favicon.svg'));
