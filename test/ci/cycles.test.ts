import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '../helpers/git.ts';

const script = fileURLToPath(new URL('../../.ci/cycles.ts', import.meta.url));
const repo = fileURLToPath(new URL('../..', import.meta.url));

function check(root?: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...(root ? [root] : [])], { encoding: 'utf8', cwd: repo });
  return { code: r.status, out: r.stdout + r.stderr };
}

// A small tree: a → b (import type) → c → a, with `.js` and extension-less specifiers, and a
// file outside the circle that imports into it. `cycle: false` leaves c's import of a out.
function tree(t: test.TestContext, cycle: boolean): string {
  const root = makeTempDir(t, 'grove-cycles-');
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };
  write('daemon/a.ts', `import { b } from './sub/b.ts';\nexport const a = (x: number) => b(x);\n`);
  write('daemon/sub/b.ts', `import type { C } from '../../workers/c.js';\nexport const b = (x: number): C => ({ x });\n`);
  write('workers/c.ts', `${cycle ? "export { a } from '../daemon/a';\n" : ''}export interface C { x: number }\n`);
  write('test/uses.test.ts', `import { a } from '../daemon/a.ts';\nimport assert from 'node:assert';\nassert.ok(a);\n`);
  return root;
}

test('.ci/cycles: a circle of three files (one edge an import type, one an export from) fails, naming the three', (t) => {
  const { code, out } = check(tree(t, true));
  assert.equal(code, 1, out);
  const line = out.split('\n').find((l) => l.startsWith('import cycle'));
  assert.equal(line, 'import cycle (3 files): daemon/a.ts, daemon/sub/b.ts, workers/c.ts');
  assert.ok(!out.includes('uses.test.ts'), 'a file that only imports into the circle is not in it');
});

test('.ci/cycles: the same tree without the circle passes with a summary', (t) => {
  const { code, out } = check(tree(t, false));
  assert.equal(code, 0, out);
  assert.equal(out.trim(), 'no import cycles: 4 files, 3 relative imports');
});

test('.ci/cycles: the repository itself has no import cycle', () => {
  const { code, out } = check();
  assert.equal(code, 0, out);
  assert.match(out, /^no import cycles: \d+ files/);
});
