// The dashboard as a new user first meets it: a task made from All projects.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addProject, startDaemon } from './helpers/daemon.ts';
import { makeRepo } from './helpers/git.ts';
import { openPage, sharedBrowser, tabTo } from './helpers/browser.ts';

const browser = sharedBrowser();

test('All projects offers New task: how to add a project when there is none, the one project chosen, a choice between two, and the new task opened', async (t) => {
  const d = await startDaemon(t);
  const { page, errors } = await openPage(t, await browser());
  const base = `http://127.0.0.1:${d.port}`;

  // No project: the form says how to add one.
  await page.goto(`${base}/#/new-task`);
  await page.getByRole('heading', { name: 'New task' }).waitFor();
  await page.locator('section.empty', { hasText: 'add a git repository first' }).getByRole('link', { name: 'Add a project' }).waitFor();

  // One project: the board's New task (reached with the keyboard) opens the form with it chosen,
  // its first field focused.
  const alpha = await addProject(d, makeRepo(t, { files: { 'README.md': 'alpha\n' } }));
  await page.goto(`${base}/#/`);
  await page.getByRole('heading', { name: 'All projects' }).waitFor();
  await tabTo(page, 'New task');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'New task' }).waitFor();
  await page.locator('#f-project_id:focus').waitFor();
  assert.equal(await page.inputValue('#f-project_id'), alpha.id, 'the only project is preselected');

  // Two projects: no guess; the task is made in the one chosen, and its page opens.
  const beta = await addProject(d, makeRepo(t, { files: { 'README.md': 'beta\n' } }));
  await page.getByRole('link', { name: 'All projects' }).click();
  await page.getByRole('link', { name: beta.name }).waitFor();
  await page.getByRole('link', { name: 'New task' }).click();
  await page.locator(`#f-project_id option[value="${beta.id}"]`).waitFor({ state: 'attached' });
  assert.equal(await page.inputValue('#f-project_id'), '', 'with two projects none is chosen for the user');
  await page.fill('#f-name', 'from the board');
  await page.getByRole('button', { name: 'Create task' }).click();
  assert.equal(await page.evaluate(() => (document.getElementById('f-project_id') as HTMLSelectElement).validity.valueMissing), true, 'a project must be chosen');
  assert.deepEqual((await d.socket('GET', '/api/tasks')).json, [], 'nothing made without a project');
  await page.selectOption('#f-project_id', beta.id);
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.getByRole('heading', { name: 'from the board' }).waitFor();
  const tasks = (await d.socket('GET', '/api/tasks')).json;
  assert.equal(tasks.length, 1);
  assert.equal(tasks[0].project_id, beta.id, 'made in the project chosen');
  assert.equal(new URL(page.url()).hash, `#/tasks/${tasks[0].id}`, "on the new task's page");
  assert.deepEqual(errors, []);
});
