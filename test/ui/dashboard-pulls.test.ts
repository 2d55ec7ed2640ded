/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { git } from '../helpers/git.ts';
import { startGitHub } from '../helpers/github-server.ts';
import { issueTask, project, pullsDaemon } from '../helpers/pulls.ts';
import { until } from '../helpers/store.ts';

// A task's pull request on its page (DESIGN §20), against a daemon following the GitHub stand-in
// and pushing to a local bare origin: Open pull request refused with the API's message on a task
// without changes; on a task with some, the pull request opened shown live (its link, state and
// fix tries), a review's feedback round shown live to its pushed commit, with its follow-up a link
// to that turn, and merged shown as merged; in light and dark schemes alike.
const browser = sharedBrowser();

test("a task's pull request on its page: refused to open without changes, opened, a feedback round and merged shown live", async (t) => {
  const gh = await startGitHub();
  t.after(() => gh.close());
  const d = await pullsDaemon(t, gh);
  const { full, bare, p } = await project(t, gh, d);
  const { task } = await issueTask(d, gh, full, p.id);
  const idle = (await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'idle' } })).json;

  // Nothing its base lacks: the button is refused with the API's problem, and nothing is opened.
  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${idle.id}`);
  const idleFact = page.locator('dd.pull');
  await idleFact.getByRole('button', { name: 'Open pull request' }).click();
  const refusal = idleFact.getByRole('alert');
  await refusal.waitFor();
  const problem = (await d.socket('POST', `/api/tasks/${idle.id}/pr`, { body: {} })).json;
  assert.equal(problem.code, 'PR_NO_CHANGES');
  assert.equal(await refusal.textContent(), `${problem.detail} (PR_NO_CHANGES)`);
  assert.deepEqual(gh.pulls(full), [], 'nothing opened');

  // The task with changes: no pull request yet, then one opened elsewhere shows from its event.
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  const fact = page.locator('dd.pull');
  await fact.getByRole('button', { name: 'Open pull request' }).waitFor();
  await page.evaluate(() => ((window as any).samePage = true));
  const opened = await d.socket('POST', `/api/tasks/${task.id}/pr`, { body: {} });
  assert.equal(opened.status, 201, opened.text);
  const link = fact.getByRole('link', { name: `#${opened.json.number}` });
  await link.waitFor();
  assert.equal(await link.getAttribute('href'), opened.json.url);
  assert.equal(await fact.locator('.badge.pull-ok').textContent(), 'open');
  assert.equal(await fact.locator('.tries').textContent(), '0 of 3 fix tries used');
  assert.equal(await fact.getByRole('button').count(), 0, 'no button once it has one');
  assert.equal(await page.locator('dt', { hasText: 'Pull request' }).count(), 1);

  // A review asking changes: its round shows while its follow-up runs and when it pushed.
  gh.review(full, opened.json.number, { user: 'bob', state: 'CHANGES_REQUESTED', body: 'Please handle Mondays too.' });
  const round = fact.locator('.pull-rounds li[data-kind="review"]');
  await round.waitFor({ timeout: 60_000 });
  await fact.locator('.pull-rounds li[data-outcome="pushed"]').waitFor({ timeout: 60_000 });
  const pushed = git(bare, 'rev-parse', `refs/heads/${task.branch}`);
  const stored = (await d.socket('GET', `/api/tasks/${task.id}/pr`)).json;
  assert.equal(stored.rounds[0].pushed_commit, pushed);
  assert.match((await round.locator('.round-ask').textContent()) ?? '', /^review asking changes by @bob$/);
  assert.equal(await round.locator('.round-end').textContent(), `pushed ${pushed.slice(0, 12)}`);
  assert.equal(await round.locator('time').getAttribute('datetime'), stored.rounds[0].at);
  await until(async () => (await fact.locator('.tries').textContent()) === '1 of 3 fix tries used', 'the try counted');
  // Its follow-up: a link to that turn on the page, which it scrolls to without leaving the page.
  await round.getByRole('link', { name: 'its follow-up' }).click();
  assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.session), stored.rounds[0].session_id);
  assert.equal(new URL(page.url()).hash, `#/tasks/${task.id}`);

  // Merged on GitHub: shown as merged (the task archived meanwhile), still without a reload.
  gh.mergePull(full, opened.json.number, 'bob');
  await fact.locator('.badge.pull-ok', { hasText: 'merged' }).waitFor({ timeout: 60_000 });
  assert.equal(await fact.getAttribute('data-state'), 'merged');
  assert.equal(await page.evaluate(() => (window as any).samePage), true, 'the page was not loaded again');
  const samples = ['dd.pull .badge.pull-ok', '.pull-rounds .status.round-pushed', '.pull-rounds .round-ask', 'dd.pull .tries'];
  for (const [sel, ratio] of Object.entries((await contrasts(page, samples)).out)) assert.ok(ratio >= 4.5, `light: ${sel} has contrast ${ratio}`);

  // Dark: the same page, as readable.
  const dark = await openPage(t, await browser(), { colorScheme: 'dark' });
  await dark.page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  await dark.page.locator('.pull-rounds li[data-outcome="pushed"]').waitFor();
  const shown = await contrasts(dark.page, samples);
  assert.ok(shown.page < 0.2, 'a dark page');
  for (const [sel, ratio] of Object.entries(shown.out)) assert.ok(ratio >= 4.5, `dark: ${sel} has contrast ${ratio}`);

  assert.deepEqual(
    failures.map((f) => f.split(' ', 3).join(' ')),
    [`422 POST /api/tasks/${idle.id}/pr`],
  );
  assert.deepEqual(errors.filter((e) => !/status of 422/.test(e)), []);
  assert.deepEqual(dark.errors, []);
  assert.deepEqual(dark.failures, []);
  await d.socket('DELETE', `/api/tasks/${idle.id}?force=true`);
});
