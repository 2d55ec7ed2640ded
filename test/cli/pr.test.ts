// `grove pr TASK` through the real CLI (DESIGN §20): it opens the task's pull request, or shows the
// one it has; refusals exit 1 with the code, usage errors 2.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grove } from '../helpers/cli.ts';
import { issueTask, project, pullsWorld } from '../helpers/pulls.ts';

const world = pullsWorld();

test('grove pr opens the pull request, then shows it; refusals exit 1 with the code, a bad --fix-tries exits 2', async (t) => {
  const { gh, d } = await world();
  const { full, p } = await project(t, gh, d);
  const { task, issue } = await issueTask(d, gh, full, p.id);

  const bad = await grove(d.home, ['pr', task.id, '--fix-tries', 'many']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--fix-tries must be a whole number/);

  const opened = await grove(d.home, ['pr', task.id, '--fix-tries', '1', '--json']);
  assert.equal(opened.code, 0, opened.stderr);
  assert.equal(opened.json.repository, full);
  assert.equal(opened.json.fix_tries, 1);
  assert.equal(gh.pull(full, opened.json.number).pull.head, task.branch);

  const shown = await grove(d.home, ['pr', task.id]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^pull request #${opened.json.number} of ${full} \\(open, followed\\): `));
  assert.match(shown.stdout, new RegExp(`fixes #${issue}; fix tries 0 of 1`));
  assert.equal(gh.pulls(full).length, 1, 'not opened twice');

  const idle = (await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'idle' } })).json;
  const refused = await grove(d.home, ['pr', idle.id]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr + refused.stdout, /PR_NO_CHANGES/);
});
