/// <reference lib="dom" />
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { addProject, ROOT, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { startGitHub } from '../helpers/github-server.ts';
import { agentHome } from '../helpers/sessions.ts';

// Intake on a project's board (DESIGN §20), against a daemon polling a local GitHub stand-in: the
// watch set from the form (a bad repository refused at its field, nothing stored), a writer's
// label taken and a reader's refused shown live, the task's issue on its card and its page, a
// refused token marked with its error, and the watch stopped.
const browser = sharedBrowser();
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const TOKEN = 'ghp_test_token';

test('intake set from the board, issues taken and refused shown live, the issue on the task, a refused token marked, the watch stopped', async (t) => {
  const gh = await startGitHub();
  t.after(gh.close);
  const home = agentHome(t, { agents: { claudish: { command: [STREAM, '--', '{prompt}'], format: 'claude' } }, github: { api_url: gh.url } });
  const d = await startDaemon(t, { home, env: { GH_TOKEN: TOKEN } });
  gh.addRepo('acme/board');
  gh.setPermission('acme/board', 'maria', 'write');
  gh.setPermission('acme/board', 'rita', 'read');
  const p = await addProject(d, makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'claudish' }) } }));

  const { page, errors, failures } = await openPage(t, await browser());
  const board = `http://127.0.0.1:${d.port}/#/projects/${p.id}`;
  await page.goto(board);
  const panel = page.getByRole('region', { name: 'Intake' });
  await panel.getByText('Not watching').waitFor();

  await panel.getByText('Watch issues').first().click();
  const form = page.getByRole('form', { name: 'Set the intake' });
  await form.getByLabel('Label').fill('grove');
  await form.getByLabel('Repository').fill('not a repo');
  await form.getByRole('combobox', { name: 'Agent' }).selectOption('claudish');
  await form.getByLabel('Instructions').fill('write:fix.txt=fixed');
  await form.getByLabel('Its work').selectOption('none');
  await form.getByLabel('Every (seconds)').fill('1');
  await form.getByRole('button', { name: 'Watch issues' }).click();
  // The API's own message, at the repository's field; nothing stored.
  await page.locator('#intake-repository-error').waitFor();
  assert.equal(await page.locator('#intake-repository-error').textContent(), 'must be owner/name');
  assert.equal(await form.getByLabel('Repository').getAttribute('aria-invalid'), 'true');
  assert.equal(await form.locator('.form-error').count(), 0, 'claimed by its field alone');
  assert.equal((await d.socket('GET', `/api/projects/${p.id}/intake`)).status, 404);

  await form.getByLabel('Repository').fill('acme/board');
  await form.getByRole('button', { name: 'Watch issues' }).click();
  const watch = panel.locator('.watch');
  await watch.waitFor();
  assert.equal(await form.isVisible(), false, 'the form closes once the watch is set');
  const set = (await d.socket('GET', `/api/projects/${p.id}/intake`)).json;
  assert.deepEqual([set.repository, set.label, set.land, set.interval_s, set.session], ['acme/board', 'grove', 'none', 1, { prompt: 'write:fix.txt=fixed', agent: 'claudish', mode: 'edit' }]);
  assert.equal(await watch.locator('.badge.label').textContent(), 'grove');
  assert.equal(await watch.locator('.badge.watch-ok').textContent(), 'watching');
  assert.match((await watch.locator('.polls').textContent()) ?? '', /every 1 s, land none, claudish/);

  // Issues labelled now: taken and refused, shown from their events without a reload.
  await page.evaluate(() => ((window as any).samePage = true));
  const taken = gh.addIssue('acme/board', { title: 'Crash on empty input', user: 'rita' });
  gh.label('acme/board', taken, 'grove', 'maria');
  const refused = gh.addIssue('acme/board', { title: 'Delete the database', user: 'rita' });
  gh.label('acme/board', refused, 'grove', 'rita');
  const takenRow = watch.locator(`li[data-issue="${taken}"][data-outcome="taken"]`);
  const refusedRow = watch.locator(`li[data-issue="${refused}"][data-outcome="refused"]`);
  await takenRow.waitFor({ timeout: 30_000 });
  await refusedRow.waitFor({ timeout: 30_000 });
  const item = (await d.socket('GET', `/api/projects/${p.id}/intake`)).json.items.find((i: any) => i.number === taken);
  const task = (await d.socket('GET', `/api/tasks/${item.task_id}`)).json;
  assert.equal(await takenRow.getByRole('link', { name: `#${taken} Crash on empty input` }).getAttribute('href'), `${gh.url}/acme/board/issues/${taken}`);
  const its = takenRow.getByRole('link', { name: 'its task' });
  assert.equal(await its.getAttribute('href'), `#/tasks/${task.id}`);
  assert.equal(await its.getAttribute('title'), task.name);
  assert.match((await takenRow.textContent()) ?? '', /taken labelled by @maria/);
  assert.match((await refusedRow.textContent()) ?? '', /refused @rita, who added the label, has read permission/);
  assert.equal(await page.evaluate(() => (window as any).samePage), true, 'the page was not loaded again');

  // The task's card marks its issue; its page links it.
  const card = page.locator(`a.card[data-task="${task.name}"]`);
  assert.equal(await card.locator('.badge.issue').textContent(), `issue #${taken}`);
  await card.click();
  const fact = page.locator('dd.issue');
  await fact.waitFor();
  assert.equal(await fact.getByRole('link').getAttribute('href'), `${gh.url}/acme/board/issues/${taken}`);
  assert.equal(await fact.getByRole('link').textContent(), `#${taken} Crash on empty input`);
  assert.equal(await fact.locator('.mono').textContent(), 'acme/board');

  // A refused token: marked, with the poll's error, once the watch is read again at its next poll.
  await page.goto(board);
  delete gh.tokens[TOKEN];
  const bad = watch.locator('.badge.watch-bad');
  await bad.waitFor({ timeout: 30_000 });
  assert.equal(await bad.textContent(), 'GitHub refused the token: not polling');
  assert.equal(await watch.getAttribute('data-state'), 'unauthorized');
  const shown = (await d.socket('GET', `/api/projects/${p.id}/intake`)).json;
  assert.equal(await watch.locator('.poll-error').textContent(), shown.last_poll.error);
  const samples = ['section.intake h2', 'section.intake .badge.label', 'section.intake .badge.watch-bad', 'section.intake .poll-error', '.intake-items .status.intake-taken', '.intake-items .status.intake-refused'];
  for (const [sel, ratio] of Object.entries((await contrasts(page, samples)).out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);
  gh.tokens[TOKEN] = 'grove-bot';

  await watch.getByRole('button', { name: 'Stop watching' }).click();
  await panel.getByText('Not watching').waitFor();
  assert.equal((await d.socket('GET', `/api/projects/${p.id}/intake`)).status, 404);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).status, 200, 'its tasks stay');

  assert.deepEqual(
    failures.map((f) => f.split(' ', 3).join(' ')),
    [`422 POST /api/projects/${p.id}/intake`],
  );
  assert.deepEqual(errors.filter((e) => !/status of 422/.test(e)), []);
  for (const task of (await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json) await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
});
