import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { MAX_ARG_BYTES } from '../../schemas/common.ts';
import { MAX_CONFIG_BYTES } from '../../schemas/project-config.ts';
import { CONFIG_FILE, createProjectConfigs } from '../../daemon/projects/config.ts';
import { makeTempDir } from '../helpers/git.ts';
import { folderWatched } from '../helpers/inotify.ts';
import { memoryLog, until } from '../helpers/store.ts';

function configs(t: test.TestContext, log = pino({ level: 'silent' })) {
  const c = createProjectConfigs({ log });
  t.after(() => c.close());
  return c;
}

// What load() refuses with: the code, the detail without the file's path, and the issues.
function refusal(load: () => unknown, file: string) {
  try {
    load();
  } catch (err) {
    const e = err as { code: string; detail: string; errors: unknown };
    return { code: e.code, detail: e.detail.replace(file, '<file>'), errors: e.errors };
  }
  assert.fail('load() did not refuse');
}

test('project config: none is an empty config; a valid one is read afresh at every load', (t) => {
  const c = configs(t);
  const project = makeTempDir(t);
  assert.deepEqual(c.load(project), {});
  writeFileSync(path.join(project, CONFIG_FILE), JSON.stringify({ setup: ['npm ci'], ports: [3000], check: ['npm test'] }));
  assert.deepEqual(c.load(project), { setup: ['npm ci'], ports: [3000], check: ['npm test'] });
  writeFileSync(path.join(project, CONFIG_FILE), JSON.stringify({ env: { A: 'b' } }));
  assert.deepEqual(c.load(project), { env: { A: 'b' } }, 'the edit applies at once, no watcher needed');
});

test('project config: bad JSON, a bad field or a command too long for an argument is CONFIG_INVALID with its JSON path', (t) => {
  const c = configs(t);
  const project = makeTempDir(t);
  const file = path.join(project, CONFIG_FILE);
  const load = () => c.load(project);
  writeFileSync(file, '{"setup": [');
  const broken = refusal(load, file);
  assert.equal(broken.code, 'CONFIG_INVALID');
  assert.match(broken.detail, /^<file> is not valid JSON: /);
  assert.deepEqual(broken.errors, [{ path: '/', message: 'is not valid JSON' }]);
  writeFileSync(file, JSON.stringify({ setup: ['   '], ports: [0], colour: 'red', check: ['npm test', '  '] }));
  assert.deepEqual((refusal(load, file).errors as Array<{ path: string }>).map((e) => e.path).sort(), ['/check/1', '/colour', '/ports/0', '/setup/0']);
  writeFileSync(file, JSON.stringify({ check: 'npm test' }));
  assert.deepEqual((refusal(load, file).errors as Array<{ path: string }>).map((e) => e.path), ['/check']);
  writeFileSync(file, JSON.stringify({ check: ['x'.repeat(MAX_ARG_BYTES + 1)] }));
  assert.deepEqual((refusal(load, file).errors as Array<{ path: string }>).map((e) => e.path), ['/check/0']);
  writeFileSync(file, JSON.stringify({ setup: ['x'.repeat(MAX_ARG_BYTES + 1)] }));
  assert.deepEqual(refusal(load, file), {
    code: 'CONFIG_INVALID',
    detail: `<file> is invalid: /setup/0 is longer than ${MAX_ARG_BYTES} bytes, the most one command may hold`,
    errors: [{ path: '/setup/0', message: `is longer than ${MAX_ARG_BYTES} bytes, the most one command may hold` }],
  });
});

test('project config: allow (Claude Code rules) and approval_timeout_s (DESIGN §15) are read, and checked', (t) => {
  const c = configs(t);
  const project = makeTempDir(t);
  const file = path.join(project, CONFIG_FILE);
  writeFileSync(file, JSON.stringify({ allow: ['Bash(npm test:*)', 'Edit'], approval_timeout_s: 120 }));
  assert.deepEqual(c.load(project), { allow: ['Bash(npm test:*)', 'Edit'], approval_timeout_s: 120 });
  writeFileSync(file, JSON.stringify({ allow: ['Bash(npm test:*', ''], approval_timeout_s: -1 }));
  const refused = refusal(() => c.load(project), file);
  assert.equal(refused.code, 'CONFIG_INVALID');
  assert.deepEqual([...new Set((refused.errors as Array<{ path: string }>).map((e) => e.path))].sort(), ['/allow/0', '/allow/1', '/approval_timeout_s']);
});

test('project config: only a regular file of the project, of bounded size, in UTF-8 is read', (t) => {
  const c = configs(t);
  const why = (project: string) => refusal(() => c.load(project), path.join(project, CONFIG_FILE)).detail;

  const fifo = makeTempDir(t);
  execFileSync('mkfifo', [path.join(fifo, CONFIG_FILE)]);
  assert.equal(why(fifo), '<file> is not a regular file', 'a FIFO would block the daemon');

  const outside = makeTempDir(t);
  writeFileSync(path.join(outside, 'secret'), '{}');
  const linked = makeTempDir(t);
  symlinkSync(path.join(outside, 'secret'), path.join(linked, CONFIG_FILE));
  assert.equal(why(linked), `<file> is a symlink to ${path.join(outside, 'secret')}, outside the project`);

  const within = makeTempDir(t);
  mkdirSync(path.join(within, 'conf'));
  writeFileSync(path.join(within, 'conf', 'grove.json'), '{"ports":[4000]}');
  symlinkSync('conf/grove.json', path.join(within, CONFIG_FILE));
  assert.deepEqual(c.load(within), { ports: [4000] }, 'a link within the project is fine');

  const dangling = makeTempDir(t);
  symlinkSync('nowhere.json', path.join(dangling, CONFIG_FILE));
  assert.equal(why(dangling), '<file> cannot be read (ENOENT)', 'a dangling link is an error, not a missing config');

  const big = makeTempDir(t);
  writeFileSync(path.join(big, CONFIG_FILE), Buffer.alloc(MAX_CONFIG_BYTES + 1, ' '));
  assert.equal(why(big), `<file> is ${MAX_CONFIG_BYTES + 1} bytes; the limit is ${MAX_CONFIG_BYTES}`);

  const latin = makeTempDir(t);
  writeFileSync(path.join(latin, CONFIG_FILE), Buffer.from('{"setup":["echo \xe9"]}', 'latin1'));
  assert.equal(why(latin), '<file> is not valid UTF-8');
});

// A watched project folder, its config file's path, and the records its watcher logs.
function watched(t: test.TestContext) {
  const { log, records } = memoryLog();
  const c = configs(t, log);
  const project = makeTempDir(t);
  c.watch(project);
  return { c, records, project, file: path.join(project, CONFIG_FILE) };
}

test('project config: a watched project logs an invalid save at once, and a fix; unwatched, nothing', async (t) => {
  const { c, records, project, file } = watched(t);
  c.watch(project);
  // chokidar is ready once it has listed the folder, and it may fold saves close together:
  // each wait saves again until the log shows it.
  await until(() => {
    writeFileSync(file, '{"ports": [1');
    return records.some((r) => r.level === 40);
  }, 'the invalid save logged');
  const warning = records.find((r) => r.level === 40);
  assert.equal(warning.file, file);
  assert.match(warning.msg, /^\.grove\.json is invalid; tasks of this project will be refused until it is fixed: /);
  await until(() => {
    writeFileSync(file, '{"ports": [1]}');
    return records.some((r) => r.level === 30 && r.msg === '.grove.json loaded');
  }, 'the fix logged');

  c.unwatch(project);
  const seen = records.length;
  writeFileSync(file, 'not json');
  // Another watched project's save shows the watcher still runs, and that the unwatched one was not reported.
  const other = makeTempDir(t);
  c.watch(other);
  await until(() => {
    writeFileSync(path.join(other, CONFIG_FILE), '{}');
    return records.slice(seen).some((r) => r.file === path.join(other, CONFIG_FILE));
  }, 'the other project logged');
  assert.deepEqual(records.slice(seen).filter((r) => r.file === file), []);
  await c.close();
  await c.close();
});

test('project config: saves close together (the last one truncated, then written the moment it is read) are reported up to the last', async (t) => {
  const { c, records, project, file } = watched(t);
  await until(() => {
    writeFileSync(file, '{}');
    return records.some((r) => r.msg === '.grove.json loaded');
  }, 'the watcher to report a save');
  // Each save lands inside chokidar's throttle of the one before, which drops its change: the
  // truncation follows the last save above, and the rest of it lands the moment it is reported.
  let written = false;
  c.changes.onAnyChange(() => {
    if (written) return;
    written = true;
    writeFileSync(file, '{"ports": [1]}');
  });
  const from = records.length;
  writeFileSync(file, '');
  await until(() => records.slice(from).some((r) => r.level === 40), 'the truncated save reported');
  await until(() => {
    const after = records.slice(from);
    const warned = after.findIndex((r) => r.level === 40);
    return after.slice(warned + 1).some((r) => r.msg === '.grove.json loaded');
  }, 'the whole save reported', 5000);
  assert.deepEqual(c.load(project), { ports: [1] });
});

test('project config: a save made the moment a project is watched, before chokidar has listed its folder, is reported', async (t) => {
  const { c, records, file } = watched(t);
  // chokidar counts a file it finds at its first listing as initial and says nothing of it: this
  // save happens before that listing, so only the look at `ready` can report it.
  writeFileSync(file, '{"ports": [1]}');
  await until(() => records.some((r) => r.file === file && r.msg === '.grove.json loaded'), 'the early save reported');
  await c.close();
});

test('project config: loadOrNone takes an invalid config as none, warning once per use until its error changes', (t) => {
  const { log, records } = memoryLog();
  const c = configs(t, log);
  const project = makeTempDir(t);
  const file = path.join(project, CONFIG_FILE);
  const warnings = () => records.filter((r) => r.level === 40).map((r) => r.msg.replace(file, '<file>'));
  writeFileSync(file, JSON.stringify({ setup: ['npm ci'] }));
  assert.deepEqual(c.loadOrNone(project, 'archiving runs no teardown'), { setup: ['npm ci'] }, 'a valid one is itself');
  writeFileSync(file, '{ not json');
  assert.deepEqual(c.loadOrNone(project, 'archiving runs no teardown'), {});
  assert.deepEqual(c.loadOrNone(project, 'archiving runs no teardown'), {});
  assert.equal(warnings().length, 1, 'not repeated at every use');
  assert.match(warnings()[0]!, /^\.grove\.json is invalid, so archiving runs no teardown: <file> is not valid JSON/);
  c.loadOrNone(project, 'the warm pool keeps no slots');
  assert.equal(warnings().length, 2, 'another use says what it means for it');
  writeFileSync(file, JSON.stringify({ ports: 'no' }));
  c.loadOrNone(project, 'archiving runs no teardown');
  assert.equal(warnings().length, 3, 'another error is warned of');
  writeFileSync(file, '{}');
  c.loadOrNone(project, 'archiving runs no teardown');
  writeFileSync(file, JSON.stringify({ ports: 'no' }));
  c.loadOrNone(project, 'archiving runs no teardown');
  assert.equal(warnings().length, 4, 'fixed then broken again is warned of again');
  assert.throws(() => c.load(project), { code: 'CONFIG_INVALID' }, 'load still refuses');
});

test('project config: a watched folder removed is no longer watched (nor its parent, read again at its every change), and is watched again at its next use once back', async (t) => {
  const { log, records } = memoryLog();
  const c = configs(t, log);
  const parent = makeTempDir(t);
  const project = path.join(parent, 'project');
  const file = path.join(project, CONFIG_FILE);
  mkdirSync(project);
  writeFileSync(file, '{}');
  const told: string[] = [];
  c.changes.onChange(project, () => told.push('changed'));
  const [projectWatched, parentWatched] = [folderWatched(project), folderWatched(parent)];
  c.watch(project);
  await until(projectWatched, 'the project watched');
  rmSync(project, { recursive: true });
  await until(() => told.length > 0, 'the removal told');
  await until(() => !projectWatched(), 'its watch gone');
  // chokidar would watch for a folder that is gone from the nearest folder left, at once: nothing
  // says it did not, so a moment is given for it to.
  await delay(300);
  assert.equal(parentWatched(), false, 'the parent is not watched for it');

  mkdirSync(project);
  writeFileSync(file, '{"ports": [3000]}');
  assert.deepEqual(c.load(project), { ports: [3000] });
  await until(() => {
    writeFileSync(file, '{"ports": [1');
    return records.some((r) => r.level === 40 && r.file === file);
  }, 'an invalid save logged, the folder watched again');
});
