import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { addProject, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { commitFile } from '../helpers/queue.ts';
import { gate, sharedAgentDaemon } from '../helpers/sessions.ts';

// Dependencies on the dashboard (DESIGN §17): what a task's first session waits for to merge, why
// it could not start, and the last restack of a stacked task, all live from the event stream.
const browser = sharedBrowser();
const daemon = sharedAgentDaemon();

// A project whose .grove.json names the fixture agent, and a way to make ready tasks in it.
async function project(t: test.TestContext, d: TestDaemon) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }), 'f.txt': 'one\ntwo\nthree\n', 'g.txt': 'g\n' } });
  const p = await addProject(d, repo);
  const task = async (name: string, more: Record<string, unknown> = {}) => {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name, ...more } });
    assert.equal(r.status, 201, r.text);
    return { ...r.json, wt: path.join(repo, r.json.worktree_path) };
  };
  return { repo, p, task };
}

async function merge(d: TestDaemon, id: string, strategy = 'merge'): Promise<void> {
  const m = await d.socket('POST', `/api/tasks/${id}/merge`, { body: { strategy } });
  assert.equal(m.status, 200, m.text);
}

// Each sample's text readable on what is behind it (WCAG's 4.5:1).
async function readable(page: Page, selectors: string[]): Promise<void> {
  for (const [sel, ratio] of Object.entries((await contrasts(page, selectors)).out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);
}

// The task page's links to other tasks inside `where`: [name, href].
const links = (page: Page, where: string) => page.locator(`${where} a`).evaluateAll((els) => els.map((a) => [a.textContent, a.getAttribute('href')]));

test('a task after two others: its card and its page say what it waits for, each a link; the line follows the merges and goes when its session starts', async (t) => {
  const d = await daemon();
  const { p, task } = await project(t, d);
  const a = await task('first one');
  const b = await task('second one');
  commitFile(a.wt, 'a.txt', 'a\n');
  commitFile(b.wt, 'b.txt', 'b\n');
  // Held running once it starts, so the page can be read while it runs.
  const held = gate(t);
  const c = await task('after both', { after: [a.id, b.id], session: { prompt: `wait:${held.path}` } });
  assert.equal(c.session.status, 'queued', JSON.stringify(c.session));
  const { page, errors, failures } = await openPage(t, await browser());
  page.on('dialog', (dlg) => void dlg.accept());
  const base = `http://127.0.0.1:${d.port}`;

  await page.goto(`${base}/#/projects/${p.id}`);
  const card = page.locator('.card[data-task="after both"]');
  await card.locator('.waits').waitFor();
  assert.equal(await card.locator('.waits').textContent(), 'waits for first one, second one to merge');
  await readable(page, ['.card .waits']);

  await page.goto(`${base}/#/tasks/${c.id}`);
  const turn = page.locator(`.turn[data-session="${c.session.id}"]`);
  await turn.locator('.waits').waitFor();
  assert.equal(await turn.locator('.waits').textContent(), 'waits for first one, second one to merge');
  assert.deepEqual(await links(page, `.turn[data-session="${c.session.id}"] .waits`), [
    ['first one', `#/tasks/${a.id}`],
    ['second one', `#/tasks/${b.id}`],
  ]);

  // One merged: the line names the other only, live.
  await merge(d, a.id);
  await turn.locator('.waits', { hasText: 'waits for second one to merge' }).waitFor({ timeout: 30_000 });
  assert.equal(await turn.locator('.status').textContent(), 'queued');

  // The last one merged, from the page's own Merge action: the session starts and the line goes.
  await page.goto(`${base}/#/tasks/${b.id}`);
  await page.getByRole('button', { name: 'Merge', exact: true }).click();
  await page.locator('.actions [role="status"]', { hasText: 'Merged into main' }).waitFor({ timeout: 30_000 });
  await page.goto(`${base}/#/tasks/${c.id}`);
  await turn.locator('.status', { hasText: 'running' }).waitFor({ timeout: 30_000 });
  assert.equal(await turn.locator('.waits').count(), 0, 'the line is gone once it started');
  await page.goto(`${base}/#/projects/${p.id}`);
  await card.locator('.badge.running').waitFor();
  assert.equal(await card.locator('.waits').count(), 0);
  held.release();
  assert.deepEqual(errors, [], `no console errors; failed requests: ${failures.join('\n')}`);
});

test('a task it waits for archived unmerged: its card and its page say so, naming that task', async (t) => {
  const d = await daemon();
  const { p, task } = await project(t, d);
  const a = await task('given up');
  const c = await task('waits in vain', { after: [a.id], session: { prompt: 'echo:never' } });
  const { page, errors, failures } = await openPage(t, await browser());
  const base = `http://127.0.0.1:${d.port}`;
  await page.goto(`${base}/#/tasks/${c.id}`);
  const turn = page.locator(`.turn[data-session="${c.session.id}"]`);
  await turn.locator('.waits', { hasText: 'waits for given up to merge' }).waitFor();

  // Archived while the page is open: the event ends the session failed, and the page says why.
  assert.equal((await d.socket('DELETE', `/api/tasks/${a.id}?force=true`)).status, 200);
  const failed = turn.locator('.waits.failed');
  await failed.waitFor({ timeout: 30_000 });
  assert.equal(await failed.textContent(), 'did not start: given up was archived without being merged');
  assert.deepEqual(await links(page, `.turn[data-session="${c.session.id}"] .waits.failed`), [['given up', `#/tasks/${a.id}`]]);
  assert.equal(await turn.locator('.status').textContent(), 'failed');

  // The board, loaded afresh: the card says the same.
  await page.goto(`${base}/#/projects/${p.id}`);
  const card = page.locator('.card[data-task="waits in vain"]');
  await card.locator('.waits.failed').waitFor();
  assert.equal(await card.locator('.waits.failed').textContent(), 'did not start: given up was archived without being merged');
  await readable(page, ['.card .waits.failed']);
  assert.deepEqual(errors, [], `no console errors; failed requests: ${failures.join('\n')}`);
});

test('a stacked task restacked when the task under it merges: its page says onto what, after which task, at which commit, live and when opened later', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('bottom');
  commitFile(a.wt, 'a.txt', 'a\n');
  const s = await task('stacked', { base: a.branch });
  commitFile(s.wt, 's.txt', 's\n');
  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${s.id}`);
  await page.getByRole('heading', { name: 'stacked' }).waitFor();
  assert.equal(await page.locator('.restack').count(), 0, 'nothing before a restack');

  await merge(d, a.id, 'squash');
  const shown = page.locator('.restack.ok');
  await shown.waitFor({ timeout: 30_000 });
  const head = git(s.wt, 'rev-parse', 'HEAD');
  assert.equal(git(repo, 'rev-parse', 'main'), git(s.wt, 'rev-parse', 'HEAD^'), 'restacked for real');
  assert.equal(await shown.textContent(), `Restacked onto main after bottom merged: ${s.branch} is now at ${head.slice(0, 12)}.`);
  assert.deepEqual(await links(page, '.restack'), [['bottom', `#/tasks/${a.id}`]]);
  await readable(page, ['.restack.ok']);
  // The task's base moved with it, from the same event.
  assert.equal(await page.locator('dl.facts dt:text-is("Base") + dd').textContent(), 'main');
  // A page opened afterwards reads it from the task's events.
  await page.reload();
  await page.locator('.restack.ok', { hasText: head.slice(0, 12) }).waitFor();
  assert.deepEqual(errors, [], `no console errors; failed requests: ${failures.join('\n')}`);
});

test('a restack that conflicts: its page names the files and how to finish it by hand; the branch is as it was', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('bottom');
  commitFile(a.wt, 'g.txt', 'g of the bottom\n');
  const s = await task('stacked', { base: a.branch });
  const tip = commitFile(s.wt, 'f.txt', 'stacked\ntwo\nthree\n');
  commitFile(repo, 'f.txt', 'main\ntwo\nthree\n');
  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${s.id}`);
  await page.getByRole('heading', { name: 'stacked' }).waitFor();

  await merge(d, a.id);
  const shown = page.locator('.restack.failed');
  await shown.waitFor({ timeout: 30_000 });
  assert.match((await shown.locator('.bad').textContent()) ?? '', /^Restack onto main after bottom merged failed: .*conflict/i);
  assert.equal(await shown.locator('.files').textContent(), 'Conflicts in: f.txt');
  assert.equal(
    await shown.locator('.hint').textContent(),
    `${s.branch} is as it was, still on ${a.branch}. Rebase it by hand in its worktree: git rebase --onto main ${a.branch}, resolve the files, then git rebase --continue. grove tries again when the task's next agent session ends or the daemon restarts.`,
  );
  await readable(page, ['.restack .bad', '.restack .files', '.restack .hint']);
  assert.equal(git(s.wt, 'rev-parse', 'HEAD'), tip, 'the branch as it was');
  assert.equal(await page.locator('dl.facts dt:text-is("Base") + dd').textContent(), a.branch);
  await page.reload();
  await page.locator('.restack.failed .files', { hasText: 'Conflicts in: f.txt' }).waitFor();
  assert.deepEqual(errors, [], `no console errors; failed requests: ${failures.join('\n')}`);
});
