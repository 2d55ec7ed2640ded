/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { addProject } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { gate, sharedAgentDaemon } from '../helpers/sessions.ts';

// Automations on a project's board (DESIGN §19): added through the form (a bad cron refused at
// its field, nothing added), listed with the schedule in words and the next time, run now with
// the run's outcome shown live, paused and resumed; one for a single time, in the reader's zone.
const browser = sharedBrowser();
const daemon = sharedAgentDaemon();

// The automation's row on the board.
const row = (page: Page, name: string) => page.locator(`section.automations li[data-automation="${name}"]`);

// Each sample's text readable on what is behind it (WCAG's 4.5:1).
async function readable(page: Page, selectors: string[]): Promise<void> {
  for (const [sel, ratio] of Object.entries((await contrasts(page, selectors)).out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);
}

test('an automation added from the board (a bad cron refused at its field), run now and watched live, paused and resumed; one for a single time', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const p = await addProject(d, repo);
  const listed = async () => (await d.socket('GET', `/api/automations?project_id=${p.id}`)).json as any[];
  t.after(async () => {
    for (const a of await listed()) await d.socket('DELETE', `/api/automations/${a.id}`);
  });
  const held = gate(t);
  const { page, errors, failures } = await openPage(t, await browser());
  const board = `http://127.0.0.1:${d.port}/#/projects/${p.id}`;
  await page.goto(board);
  const panel = page.getByRole('region', { name: 'Automations' });
  await panel.getByText('None yet').waitFor();

  await panel.getByText('Add an automation').click();
  const form = page.getByRole('form', { name: 'New automation' });
  await form.getByLabel('Name').fill('weekday triage');
  // What is typed is read back in words.
  await form.getByLabel('Cron').fill('0 9 * * 1-5');
  await form.getByText('Reads: weekdays at 09:00').waitFor();
  await form.getByLabel('Cron').fill('0 25 * * *');
  await form.getByLabel('Time zone').fill('Europe/Paris');
  await form.getByLabel('Prompt').fill(`wait:${held.path}`);
  await form.getByRole('combobox', { name: 'Agent' }).selectOption('fixture');
  await form.getByRole('button', { name: 'Add automation' }).click();
  // The API's own message, at the cron field; nothing added.
  const refused = await d.socket('POST', '/api/automations', { body: { project_id: p.id, name: 'x', schedule: { cron: '0 25 * * *' }, session: { prompt: 'x' } } });
  const message = refused.json.errors.find((e: any) => e.path === '/schedule/cron').message;
  assert.equal(await page.locator('#f-cron-error').textContent(), message);
  assert.equal(await form.getByLabel('Cron').getAttribute('aria-invalid'), 'true');
  assert.equal(await form.locator('.form-error').count(), 0, 'claimed by its field alone');
  assert.deepEqual(await listed(), []);
  assert.equal(await panel.locator('li[data-automation]').count(), 0);

  await form.getByLabel('Cron').fill('0 9 * * 1-5');
  await form.getByRole('button', { name: 'Add automation' }).click();
  const item = row(page, 'weekday triage');
  await item.waitFor();
  assert.equal(await form.isVisible(), false, 'the form closes once the automation is made');
  const [made] = await listed();
  assert.deepEqual(made.schedule, { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
  assert.equal(await item.locator('.schedule').textContent(), 'weekdays at 09:00 (Europe/Paris)');
  // The next time, as the API has it, in the reader's own zone.
  const next = item.locator('.next time');
  assert.equal(await next.getAttribute('datetime'), made.next_run_at);
  assert.equal(await next.textContent(), await page.evaluate((at) => new Date(at).toLocaleString(), made.next_run_at));
  assert.equal(await item.getByText('No run yet.').count(), 1);

  // Run now: the run shows as it goes, and its outcome once it ended, without a reload.
  await page.evaluate(() => ((window as any).samePage = true));
  await item.getByRole('button', { name: 'Run now' }).click();
  const run = item.locator('.runs li');
  await run.and(page.locator('[data-status="running"]')).waitFor({ timeout: 30_000 });
  assert.match((await run.textContent()) ?? '', /running run now/);
  held.release();
  await run.and(page.locator('[data-status="succeeded"]')).waitFor({ timeout: 30_000 });
  assert.match((await run.textContent()) ?? '', /succeeded run now: no changes \(archived\) its task/);
  const [ran] = (await d.socket('GET', `/api/automations/${made.id}/runs`)).json;
  assert.equal(await run.getAttribute('data-run'), ran.id);
  assert.equal(await run.getByRole('link', { name: 'its task' }).getAttribute('href'), `#/tasks/${ran.task_id}`);
  assert.equal(await page.evaluate(() => (window as any).samePage), true, 'the page was not loaded again');

  // Pause, then resume: the row follows, the API agrees.
  await item.getByRole('button', { name: 'Pause' }).click();
  await item.and(page.locator('[data-enabled="false"]')).waitFor();
  assert.equal(await item.locator('.badge.paused').textContent(), 'paused');
  assert.equal(await item.locator('.next time').count(), 0, 'no next time while paused');
  assert.equal((await listed())[0].next_run_at, null);
  // Readable in both schemes, paused badge and run outcome included.
  const samples = ['section.automations h2', 'section.automations .schedule', 'section.automations .automation-prompt', 'section.automations .badge.paused', '.runs .status.run-succeeded', '.runs time', '.new-automation > summary'];
  await readable(page, samples);
  const dark = await openPage(t, await browser(), { colorScheme: 'dark' });
  await dark.page.goto(board);
  await row(dark.page, 'weekday triage').locator('.runs .status.run-succeeded').waitFor();
  assert.ok((await contrasts(dark.page, [])).page < 0.05, 'the dark scheme is on');
  await readable(dark.page, samples);

  await item.getByRole('button', { name: 'Resume' }).click();
  await item.and(page.locator('[data-enabled="true"]')).waitFor();
  await item.locator('.next time').waitFor();
  const resumed = (await listed())[0];
  assert.ok(resumed.next_run_at !== null && Date.parse(resumed.next_run_at) > Date.now());
  assert.equal(await item.locator('.next time').getAttribute('datetime'), resumed.next_run_at);
  assert.equal(await item.locator('.badge.paused').count(), 0);
  // The other page followed too, from its own stream.
  await row(dark.page, 'weekday triage').and(dark.page.locator('[data-enabled="true"]')).waitFor();

  // One time: the browser's local time sent with its offset, shown back in the reader's zone.
  await panel.getByText('Add an automation').click();
  await form.getByLabel('Name').fill('one-off');
  await form.getByLabel('Runs').selectOption('once');
  await form.getByLabel('At').fill('2099-06-01T09:30');
  await form.getByLabel('Prompt').fill('echo:once');
  await form.getByRole('button', { name: 'Add automation' }).click();
  const once = row(page, 'one-off');
  await once.waitFor();
  const { schedule } = (await listed()).find((a) => a.name === 'one-off');
  assert.equal(schedule.at, await page.evaluate(() => new Date('2099-06-01T09:30').toISOString()));
  assert.equal(await once.locator('.schedule').textContent(), `once, at ${await page.evaluate((at) => new Date(at).toLocaleString(), schedule.at)}`);
  assert.equal(await once.locator('.next time').getAttribute('datetime'), schedule.at);

  // The refusal is the only failed request, and the browser's note of it the only error.
  assert.deepEqual(
    failures.map((f) => f.split(' ', 3).join(' ')),
    ['422 POST /api/automations'],
  );
  assert.deepEqual(errors.filter((e) => !/status of 422/.test(e)), []);
  assert.deepEqual(dark.errors, []);
});
