import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { openPage, sharedBrowser } from '../helpers/browser.ts';
import { agentHome, gate } from '../helpers/sessions.ts';

const browser = sharedBrowser();
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
// An agent that speaks Claude Code's stream-json and can continue its conversation.
const config = { agents: { stream: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], format: 'claude' } } };

test('the dashboard end to end in Chromium: add a project, create a task, watch setup, a session live, a follow-up, changes and diff, commit, merge, archive', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t, config) });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream', setup: ['echo preparing the worktree'] }), 'README.md': 'hello\n' } });
  const { page, errors } = await openPage(t, await browser());
  page.on('dialog', (dlg) => void (dlg.type() === 'prompt' ? dlg.accept('the agent wrote two files') : dlg.accept()));
  const base = `http://127.0.0.1:${d.port}`;
  await page.goto(`${base}/`);
  await page.getByRole('heading', { name: 'No projects yet' }).waitFor();

  // A project: the API's own message at the field first, then the real folder.
  await page.getByRole('link', { name: 'Add a project' }).click();
  await page.fill('#f-path', 'relative/folder');
  await page.getByRole('button', { name: 'Add project' }).click();
  const invalid = await d.socket('POST', '/api/projects', { body: { path: 'relative/folder' } });
  const atPath = invalid.json.errors.find((e: any) => e.path === '/path').message;
  assert.equal(await page.locator('#f-path-error').textContent(), atPath, "the API's own validation message, at the path field");
  assert.equal(await page.getAttribute('#f-path', 'aria-invalid'), 'true');
  const notRepo = path.join(repo, 'not-here');
  await page.fill('#f-path', notRepo);
  await page.getByRole('button', { name: 'Add project' }).click();
  const refused = await d.socket('POST', '/api/projects', { body: { path: notRepo } });
  assert.equal(refused.json.code, 'NOT_A_GIT_REPO');
  await page.locator('#f-path-error', { hasText: refused.json.detail }).waitFor();
  await page.fill('#f-path', repo);
  await page.getByRole('button', { name: 'Add project' }).click();
  await page.getByRole('link', { name: 'New task' }).click();

  // A task: its setup log, then ready.
  await page.fill('#f-name', 'dash work');
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.getByRole('heading', { name: 'dash work' }).waitFor();
  await page.locator('.page-head .status.ready').waitFor();
  await page.locator('details.panel', { hasText: 'Setup' }).locator('summary').click();
  await page.locator('pre.log', { hasText: 'preparing the worktree' }).waitFor();
  const task = (await d.socket('GET', '/api/tasks')).json.find((x: any) => x.name === 'dash work');
  assert.equal(task.status, 'ready');

  // A session whose lines arrive while it runs: its first line, then it waits for the gate.
  const held = gate(t);
  await page.selectOption('#f-agent', 'stream');
  await page.fill('#f-prompt', `wait:${held.path}`);
  await page.getByRole('button', { name: 'Start session' }).click();
  const first = page.locator('.turn').first();
  await first.locator('.output[data-lines="1"][data-ended="false"]').waitFor();
  await first.locator('.status.running').waitFor();
  await first.getByRole('button', { name: 'Raw lines' }).click();
  await first.locator('.raw .row', { hasText: '"subtype":"init"' }).waitFor();
  held.release();
  await first.locator('.output[data-ended="true"]').waitFor();
  await first.locator('.status.exited').waitFor();
  await first.locator('.result', { hasText: 'got 4 arguments' }).waitFor();

  // A follow-up in the same conversation: the agent writes a file, shown as readable turns.
  await page.fill('.followup textarea', 'write:hello.txt=hi from the agent');
  await page.getByRole('button', { name: 'Send' }).click();
  const second = page.locator('.turn').nth(1);
  await second.locator('.output[data-ended="true"]').waitFor();
  await second.locator('.item.tool .item-title', { hasText: 'Write' }).waitFor();
  await second.locator('.item.text', { hasText: 'I will write hello.txt.' }).waitFor();
  await second.locator('.item.tool-result', { hasText: 'wrote hello.txt' }).waitFor();
  const sessions = (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json;
  assert.equal(sessions.length, 2);
  assert.equal(sessions[1].parent_id, sessions[0].id, 'the follow-up continues the first session');
  assert.ok(sessions[1].command.includes('--resume'));

  // The changes and the diff, unified and side by side.
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.locator('table.files td', { hasText: 'hello.txt' }).waitFor();
  await page.locator('.diff tr.add', { hasText: 'hi from the agent' }).waitFor();
  await page.getByLabel('side by side').check();
  await page.locator('.diff table.split td.add', { hasText: 'hi from the agent' }).waitFor();

  // Commit, merge, archive: each confirmed in a dialog.
  await page.getByRole('button', { name: 'Commit', exact: true }).click();
  await page.locator('.note', { hasText: 'Committed' }).waitFor();
  await page.getByRole('button', { name: 'Merge', exact: true }).click();
  await page.locator('.note', { hasText: 'Merged into' }).waitFor();
  await page.locator('.page-head .badge.merged').waitFor();
  await page.locator('section.changes[aria-busy="false"]', { hasText: 'Merged: nothing left to land.' }).waitFor();
  assert.equal(readFileSync(path.join(repo, 'hello.txt'), 'utf8'), 'hi from the agent\n', 'the main checkout has the work');
  assert.equal(git(repo, 'log', '-1', '--format=%s', task.branch), 'the agent wrote two files');
  await page.getByRole('button', { name: 'Archive' }).click();
  await page.locator('.page-head .status.archived').waitFor();
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'archived');

  // The board shows it archived, and merged.
  await page.getByRole('link', { name: 'All projects' }).click();
  await page.locator('section[aria-label="Archived"] .card', { hasText: 'dash work' }).locator('.badge.merged').waitFor();
  // Chromium logs every failed request on the console: the two refused on purpose above, no other.
  assert.deepEqual(
    [...errors],
    ['Failed to load resource: the server responded with a status of 400 (Bad Request)', 'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)'],
    `no console errors; the daemon logged: ${d.logs.filter((l) => l?.level >= 50).map((l) => JSON.stringify(l)).join('\n') || 'no error'}`,
  );
});
