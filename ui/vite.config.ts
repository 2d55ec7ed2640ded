// The dashboard (DESIGN §12), built by `npm run build` into dist/ui, which the daemon serves at /.
// Hashed asset names under /assets/ (cached for good); no inline script, for the page's CSP.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  logLevel: 'warn',
});
