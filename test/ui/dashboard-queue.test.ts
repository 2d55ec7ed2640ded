/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { openPage, sharedBrowser } from '../helpers/browser.ts';
import { addProject, sharedDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { commitFile, newTask, waitQueueEvent } from '../helpers/queue.ts';
import { gate } from '../helpers/sessions.ts';

// The merge queue on the dashboard (DESIGN §17): queued from a task's page, watched on the board.
const browser = sharedBrowser();
const daemon = sharedDaemon();

// Queues the task from its page: the strategy, the confirmation.
async function queueFromPage(page: Page, base: string, task: any, strategy: string): Promise<void> {
  await page.goto(`${base}/#/tasks/${task.id}`);
  await page.getByRole('heading', { name: task.name }).waitFor();
  await page.getByLabel('Queue strategy').selectOption(strategy);
  await page.getByRole('button', { name: 'Queue', exact: true }).click();
}

// What the task's page says of its place in the queue, once it says `what`.
async function placeShown(page: Page, what: string): Promise<string> {
  const shown = page.locator('.queue-action [role="status"]', { hasText: what });
  await shown.waitFor();
  return (await shown.textContent()) ?? '';
}

test('tasks queued from their pages land in order on the board, one taken out leaves it; a failing check shows its reason and output there', async (t) => {
  const d = await daemon();
  const held = gate(t);
  // `one` lands once the gate opens, so the board can be read meanwhile; `bad` fails its check.
  const check = `case "$GROVE_TASK_NAME" in one) read x < '${held.path}';; bad) echo "checking bad"; echo "bad: 1 test failed"; exit 2;; esac`;
  const repo = makeRepo(t, { files: { 'f.txt': 'f\n', '.grove.json': JSON.stringify({ check: [check] }) } });
  const project = await addProject(d, repo);
  const tasks: Record<string, any> = {};
  for (const name of ['one', 'two', 'three', 'bad']) {
    tasks[name] = await newTask(d, project.id, repo, name);
    commitFile(tasks[name].wt, `${name}.txt`, `${name}\n`);
  }
  const { page, errors, failures } = await openPage(t, await browser());
  const confirms: string[] = [];
  page.on('dialog', (dlg) => {
    confirms.push(dlg.message());
    void dlg.accept();
  });
  const base = `http://127.0.0.1:${d.port}`;

  await queueFromPage(page, base, tasks.one, 'squash');
  assert.match(confirms[0]!, /^Queue grove\/one to land on main \(squash\)\?/);
  // Its landing begins (queue.landing): the page says so, live.
  assert.match(await placeShown(page, 'landing now'), /^Queued: position 1 on main, landing now/);
  assert.equal(await page.getByRole('button', { name: 'Leave the queue' }).count(), 0, 'not while it lands');
  await queueFromPage(page, base, tasks.two, 'merge');
  assert.match(await placeShown(page, 'waiting'), /^Queued: position 2 on main, waiting/);
  assert.equal(await page.getByRole('button', { name: 'Queue', exact: true }).isDisabled(), true, 'queued once');

  await queueFromPage(page, base, tasks.three, 'ff');
  assert.match(await placeShown(page, 'waiting'), /^Queued: position 3 on main/);

  // The board, in a second page: in order, the first landing, the others waiting.
  const other = await openPage(t, await browser());
  await other.page.goto(`${base}/#/projects/${project.id}`);
  const rows = (p: Page) => p.locator('section.queue ol li').evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.task, (e as HTMLElement).dataset.state]));
  await other.page.locator('section.queue li[data-task="three"]').waitFor();
  assert.deepEqual(await rows(other.page), [
    ['one', 'landing'],
    ['two', 'waiting'],
    ['three', 'waiting'],
  ]);
  assert.match((await other.page.locator('section.queue li[data-task="one"]').textContent()) ?? '', /landing now.*squash, try 1/);
  // Taken out on the task's page: the other page's board drops it (its queue.removed event).
  await page.getByRole('button', { name: 'Leave the queue' }).click();
  await page.getByRole('button', { name: 'Queue', exact: true }).and(page.locator(':enabled')).waitFor();
  await other.page.locator('section.queue li[data-task="three"]').waitFor({ state: 'detached' });
  assert.deepEqual(await rows(other.page), [
    ['one', 'landing'],
    ['two', 'waiting'],
  ]);
  assert.deepEqual(other.errors, []);

  await page.goto(`${base}/#/projects/${project.id}`);
  const board = page.locator('section.queue');
  await board.locator('li[data-task="two"]').waitFor();

  // Live: each leaves the board as it lands, and the queue is gone once empty.
  held.release();
  await board.locator('li[data-task="one"]').waitFor({ state: 'detached', timeout: 60_000 });
  await board.waitFor({ state: 'detached', timeout: 60_000 });
  const landed = [await waitQueueEvent(d, tasks.one.id, 'queue.landed'), await waitQueueEvent(d, tasks.two.id, 'queue.landed')];
  assert.ok(landed[0].seq < landed[1].seq, 'landed in the order queued');
  assert.equal(git(repo, 'rev-parse', 'main'), landed[1].data.commit);

  // A failing check: queued from its page, it shows there and on the board with its reason and output.
  await queueFromPage(page, base, tasks.bad, 'merge');
  await page.locator('.queue-action .queue-failure', { hasText: 'bad: 1 test failed' }).waitFor({ timeout: 60_000 });
  await page.goto(`${base}/#/projects/${project.id}`);
  const out = board.locator('li[data-task="bad"][data-state="out"]');
  await out.waitFor({ timeout: 60_000 });
  assert.match((await out.locator('.queue-failure .bad').textContent()) ?? '', /^Failed to land: the check .* exited with 2$/);
  assert.equal(await out.locator('pre').textContent(), 'checking bad\nbad: 1 test failed');
  // Back on its page, it can be queued again.
  await page.goto(`${base}/#/tasks/${tasks.bad.id}`);
  await page.locator('.queue-action .queue-failure', { hasText: 'bad: 1 test failed' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Queue', exact: true }).isDisabled(), false);
  assert.deepEqual(errors, [], `no console errors; failed requests: ${failures.join('\n')}`);
});
