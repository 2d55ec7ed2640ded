import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import test from 'node:test';
import { pino } from 'pino';
import { createProjectConfigs } from '../../daemon/projects/config.ts';
import { createProjectService } from '../../daemon/projects/service.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { GroveError } from '../../daemon/errors.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID, type TestStore } from '../helpers/store.ts';

const OTHER_HOST_ID = '00000000-0000-4000-8000-000000000002';

// The project service of one host on the test store, as the daemon wires it.
function serviceOf(t: test.TestContext, s: TestStore, hostId: string) {
  const configs = createProjectConfigs({ log: pino({ level: 'silent' }) });
  t.after(() => configs.close());
  return createProjectService({ projects: projectsTable(s.store.db, s.events), hostId, countLiveTasks: async () => 0, configs });
}

const code = (err: unknown) => (err instanceof GroveError ? err.code : String(err));

test('two hosts may each have a project of the same name and path; one host may not have two', async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const repo = makeRepo(t);
  const here = serviceOf(t, s, TEST_HOST_ID);
  const there = serviceOf(t, s, OTHER_HOST_ID);

  const mine = await here.add({ path: repo });
  const theirs = await there.add({ path: repo });
  assert.equal(mine.name, path.basename(repo));
  assert.equal(theirs.name, mine.name, "another host's project of that name does not push this one to -2");
  assert.deepEqual([mine.host_id, theirs.host_id], [TEST_HOST_ID, OTHER_HOST_ID]);
  assert.equal(theirs.path, mine.path);

  await assert.rejects(here.add({ path: repo }), (err) => code(err) === 'PROJECT_EXISTS', 'the same path twice on one host');
  const other = makeRepo(t);
  await assert.rejects(here.add({ path: other, name: mine.name }), (err) => code(err) === 'PROJECT_EXISTS', 'the same name twice on one host');
  // A second folder of the same name on this host: its default name gets this host's next suffix.
  const twin = path.join(makeTempDir(t), path.basename(repo));
  git(path.dirname(twin), 'clone', '-q', repo, twin);
  assert.equal((await here.add({ path: twin })).name, `${mine.name}-2`);
});

test("the store refuses a host's second project of one name or path even past the service", async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const projects = projectsTable(s.store.db, s.events);
  const row = (host_id: string, name: string, p: string) => ({ id: randomUUID(), name, path: p, host_id, repository: null });
  await projects.insert(row(TEST_HOST_ID, 'app', '/srv/code/app'));
  await projects.insert(row(OTHER_HOST_ID, 'app', '/srv/code/app'));
  await assert.rejects(projects.insert(row(TEST_HOST_ID, 'app', '/srv/code/other')), (err: any) => err.code === '23505');
  await assert.rejects(projects.insert(row(OTHER_HOST_ID, 'other', '/srv/code/app')), (err: any) => err.code === '23505');
});
