import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { ROOMS, roomOf } from '../../.ci/rooms.ts';
import { makeTempDir } from '../helpers/git.ts';

const script = fileURLToPath(new URL('../../.ci/rooms.ts', import.meta.url));
const repo = fileURLToPath(new URL('../..', import.meta.url));

function check(root?: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...(root ? [root] : [])], { encoding: 'utf8', cwd: repo });
  return { code: r.status, out: r.stdout + r.stderr };
}

// A small house in the real order: tasks/ imports store/ (down), a test imports anything.
// `plant` adds one more file's text.
function house(t: test.TestContext, plant: Record<string, string> = {}): string {
  const root = makeTempDir(t, 'grove-rooms-');
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };
  write('daemon/store/tasks.ts', `export const rows = () => [];\n`);
  write('daemon/tasks/service.ts', `import { rows } from '../store/tasks.ts';\nexport const list = () => rows();\n`);
  write('daemon/landing/queue.ts', `import { list } from '../tasks/service.ts';\nexport const next = () => list()[0];\n`);
  write('test/landing/queue.test.ts', `import { next } from '../../daemon/landing/queue.ts';\nimport { rows } from '../../daemon/store/tasks.ts';\nnext(); rows();\n`);
  for (const [rel, text] of Object.entries(plant)) write(rel, text);
  return root;
}

test('.ci/rooms: imports that point down pass, with a summary; tests are no room', (t) => {
  const { code, out } = check(house(t));
  assert.equal(code, 0, out);
  assert.equal(out.trim(), `rooms point down: ${ROOMS.length} rooms, 3 files, 2 imports between rooms`);
});

test('.ci/rooms: a planted upward import fails, naming the file, the import and both rooms', (t) => {
  const { code, out } = check(house(t, { 'daemon/store/peek.ts': `import type { list } from '../tasks/service.ts';\nexport type L = typeof list;\n` }));
  assert.equal(code, 1, out);
  assert.match(out, /^upward import: daemon\/store\/peek\.ts \(daemon\/store\) imports daemon\/tasks\/service\.ts \(daemon\/tasks, above it\)$/m);
});

test('.ci/rooms: two rooms that import each other fail, even with no file cycle', (t) => {
  // tasks/gate.ts → landing/queue.ts → tasks/service.ts: files in a line, rooms in a circle.
  const { code, out } = check(house(t, { 'daemon/tasks/gate.ts': `export { next } from '../landing/queue.ts';\n` }));
  assert.equal(code, 1, out);
  assert.match(out, /^upward import: daemon\/tasks\/gate\.ts \(daemon\/tasks\) imports daemon\/landing\/queue\.ts \(daemon\/landing, above it\)$/m);
});

test('.ci/rooms: a workers/ module importing a daemon room above it fails; a folder in no room fails', (t) => {
  const { code, out } = check(
    house(t, {
      'workers/review/merge.ts': `const q = await import('../../daemon/landing/queue.ts');\nexport const m = q.next;\n`,
      'daemon/attic/old.ts': `export const x = 1;\n`,
    }),
  );
  assert.equal(code, 1, out);
  assert.match(out, /^upward import: workers\/review\/merge\.ts \(workers\) imports daemon\/landing\/queue\.ts \(daemon\/landing, above it\)$/m);
  assert.match(out, /^in no room: daemon\/attic\/old\.ts/m);
});

test('.ci/rooms: a file is in the longest room that holds it', () => {
  assert.equal(roomOf('daemon/errors.ts'), 'daemon/errors.ts');
  assert.equal(roomOf('daemon/landing/queue.ts'), 'daemon/landing');
  assert.equal(roomOf('workers/review/merge.ts'), 'workers');
  assert.equal(roomOf('daemon/landingx/a.ts'), null);
});

test('.ci/rooms: the repository itself points down', () => {
  const { code, out } = check();
  assert.equal(code, 0, out);
  assert.match(out, /^rooms point down: \d+ rooms, \d+ files/);
});
