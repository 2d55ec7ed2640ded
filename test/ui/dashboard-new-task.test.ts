import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { addProject, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { commitFile } from '../helpers/queue.ts';
import { AGENT, gate, sharedAgentDaemon } from '../helpers/sessions.ts';

// The dashboard's New task form with a first prompt (DESIGN §12, §17): the task and its first
// session made at once, that session waiting for the tasks chosen under "Waits for" to merge.
const browser = sharedBrowser();
// A second agent besides the project's default, which says something before its prompt's step:
// the form's agent choice is seen in what runs.
const daemon = sharedAgentDaemon({ agents: { held: { command: [AGENT, 'echo:held agent here', '{prompt}'] } } });

async function project(t: test.TestContext, d: TestDaemon) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }), 'f.txt': 'f\n' } });
  const p = await addProject(d, repo);
  const task = async (name: string) => {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name } });
    assert.equal(r.status, 201, r.text);
    return { ...r.json, wt: path.join(repo, r.json.worktree_path) };
  };
  return { p, task };
}

// The project's New task form, open.
async function openForm(page: Page, d: TestDaemon, projectId: string): Promise<void> {
  await page.goto(`http://127.0.0.1:${d.port}/#/projects/${projectId}/new-task`);
  await page.getByRole('heading', { name: /^New task/ }).waitFor();
}

// The names the Waits-for field offers.
const offered = (page: Page) => page.locator('fieldset.field .choice').allTextContents();

test('a task made with a first prompt: refusals at their fields, then the agent chosen and the page opened on its session running, its output live', async (t) => {
  const d = await daemon();
  const { p } = await project(t, d);
  const { page, errors, failures } = await openPage(t, await browser());
  await openForm(page, d, p.id);
  // Without a prompt there is no session: nothing to choose for it.
  assert.equal(await page.getByRole('combobox', { name: 'Agent' }).count(), 0);
  assert.equal(await page.getByRole('group', { name: 'Waits for' }).count(), 0);

  const held = gate(t);
  await page.getByLabel('Name').fill('with a prompt');
  // The API's refusals at their fields, and nothing made: a blank prompt, then a mode the
  // agent cannot run in.
  await page.getByLabel('First prompt').fill('   ');
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.locator('#f-prompt-error').waitFor();
  assert.equal(await page.getByLabel('First prompt').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('First prompt').fill(`wait:${held.path}`);
  await page.getByRole('combobox', { name: 'Agent' }).selectOption('held');
  await page.getByRole('combobox', { name: 'Mode' }).selectOption('read');
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.locator('#f-mode-error', { hasText: 'is not a mode of agent held' }).waitFor();
  assert.equal(await page.locator('#f-prompt-error').count(), 0);
  assert.equal(await page.locator('.form-error').count(), 0, 'said at the field, not again below');
  assert.deepEqual((await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json, [], 'nothing made on a refusal');

  await page.getByRole('combobox', { name: 'Mode' }).selectOption('edit');
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.getByRole('heading', { name: 'with a prompt' }).waitFor();

  const tasks = (await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json;
  const made = tasks.find((x: { name: string }) => x.name === 'with a prompt');
  assert.ok(made, JSON.stringify(tasks));
  assert.ok(page.url().endsWith(`#/tasks/${made.id}`), page.url());
  const sessions = (await d.socket('GET', `/api/tasks/${made.id}/sessions`)).json;
  assert.equal(sessions.length, 1, JSON.stringify(sessions));
  assert.equal(sessions[0].agent, 'held');
  assert.equal(sessions[0].mode, 'edit');
  assert.equal(sessions[0].prompt, `wait:${held.path}`);

  const turn = page.locator(`.turn[data-session="${sessions[0].id}"]`);
  await turn.locator('.status', { hasText: 'running' }).waitFor({ timeout: 30_000 });
  await turn.locator('.raw .row', { hasText: 'held agent here' }).waitFor({ timeout: 30_000 });
  assert.equal(await turn.locator('.output').getAttribute('data-ended'), 'false');
  held.release();
  await turn.locator('.output[data-ended="true"]').waitFor({ timeout: 30_000 });
  // The two refusals are the only failed requests, and the browser's notes of them the only errors.
  assert.deepEqual(failures.map((f) => f.split(' ', 3).join(' ')), ['400 POST /api/tasks', '422 POST /api/tasks']);
  assert.deepEqual(errors.filter((e) => !/status of (400|422)/.test(e)), []);
});

test('a task made waiting for another: only open tasks offered, the waiting line on its page, and its session started once that task merged', async (t) => {
  const d = await daemon();
  const { p, task } = await project(t, d);
  const a = await task('first part');
  commitFile(a.wt, 'a.txt', 'a\n');
  await task('second part');
  const gone = await task('given up');
  assert.equal((await d.socket('DELETE', `/api/tasks/${gone.id}?force=true`)).status, 200);
  const done = await task('already in');
  commitFile(done.wt, 'd.txt', 'd\n');
  const m = await d.socket('POST', `/api/tasks/${done.id}/merge`, { body: { strategy: 'merge' } });
  assert.equal(m.status, 200, m.text);

  const { page, errors, failures } = await openPage(t, await browser());
  await openForm(page, d, p.id);
  await page.getByLabel('Name').fill('after the first');
  await page.getByLabel('First prompt').fill('echo:the first one merged');
  const waits = page.getByRole('group', { name: 'Waits for' });
  await waits.waitFor();
  // Neither the archived task nor the merged one can be waited for.
  assert.deepEqual(await offered(page), ['first part', 'second part']);
  for (const [sel, ratio] of Object.entries((await contrasts(page, ['fieldset.field legend', 'fieldset .choice', 'fieldset .hint'])).out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);
  await waits.getByRole('checkbox', { name: 'first part' }).check();
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.getByRole('heading', { name: 'after the first' }).waitFor();

  const made = (await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json.find((x: { name: string }) => x.name === 'after the first');
  const [session] = (await d.socket('GET', `/api/tasks/${made.id}/sessions`)).json;
  assert.deepEqual(session.after, [a.id]);
  const turn = page.locator(`.turn[data-session="${session.id}"]`);
  await turn.locator('.waits', { hasText: 'waits for first part to merge' }).waitFor({ timeout: 30_000 });
  assert.equal(await turn.locator('.status').textContent(), 'queued');

  const merged = await d.socket('POST', `/api/tasks/${a.id}/merge`, { body: { strategy: 'merge' } });
  assert.equal(merged.status, 200, merged.text);
  await turn.locator('.raw .row', { hasText: 'the first one merged' }).waitFor({ timeout: 30_000 });
  assert.equal(await turn.locator('.waits').count(), 0, 'the line is gone once it started');
  assert.deepEqual(errors, [], `no console errors; failed requests: ${failures.join('\n')}`);
});

test('a task chosen in Waits for archived before the form is sent: the choice stays, AFTER_INVALID is said at that field, and no task is made', async (t) => {
  const d = await daemon();
  const { p, task } = await project(t, d);
  const b = await task('soon gone');
  const { page } = await openPage(t, await browser());
  await openForm(page, d, p.id);
  await page.getByLabel('Name').fill('too late');
  await page.getByLabel('First prompt').fill('echo:never');
  const waits = page.getByRole('group', { name: 'Waits for' });
  await waits.getByRole('checkbox', { name: 'soon gone' }).check();

  assert.equal((await d.socket('DELETE', `/api/tasks/${b.id}?force=true`)).status, 200);
  // The event reaches the form: the choice is kept, and says why it will not do.
  await waits.locator('.choice', { hasText: 'soon gone (archived)' }).waitFor({ timeout: 30_000 });
  assert.ok(await waits.getByRole('checkbox', { name: 'soon gone (archived)' }).isChecked());
  await page.getByRole('button', { name: 'Create task' }).click();

  const error = page.locator('#f-after-error');
  await error.waitFor();
  assert.match((await error.textContent()) ?? '', /soon gone .*archived/);
  assert.equal(await waits.getAttribute('aria-describedby'), 'f-after-error');
  assert.equal(await page.locator('.form-error').count(), 0, 'said at the field, not again below');
  // Still the form, with what was typed.
  assert.equal(await page.getByLabel('Name').inputValue(), 'too late');
  assert.equal(await page.getByLabel('First prompt').inputValue(), 'echo:never');
  const tasks = (await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json;
  assert.deepEqual(tasks.filter((x: { name: string }) => x.name === 'too late'), [], 'no task made');
});
