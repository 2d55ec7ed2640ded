/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { addProject, ROOT, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { contrasts, focused, openPage, sharedBrowser, tabTo } from '../helpers/browser.ts';
import { sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

const browser = sharedBrowser();
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const TICKER = path.join(ROOT, 'test', 'fixtures', 'ticker.mjs');
const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');
const config = {
  agents: {
    stream: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], interactive: [STREAM, '--resume', '{session}'], format: 'claude' },
    // 60 lines, 20 a second: plain output that streams for three seconds.
    ticker: { command: [TICKER, '60', '20'] },
  },
};

// One daemon for the file, each test with a project of its own.
const daemon = sharedAgentDaemon(config);

async function setup(t: test.TestContext, grove: Record<string, unknown> = {}) {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream', ...grove }), 'README.md': 'hello\n' } });
  const project = await addProject(d, repo);
  const { page, errors, failures } = await openPage(t, await browser());
  page.on('dialog', (dlg) => void (dlg.type() === 'prompt' ? dlg.accept('from the keyboard') : dlg.accept()));
  return { d, repo, project, page, errors, failures, base: `http://127.0.0.1:${d.port}` };
}

async function newTask(d: TestDaemon, projectId: string, name: string): Promise<any> {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// The changes panel has loaded what it asked for last: an archive now races no read of the
// worktree it removes (such a read is refused, and the browser would log it).
function changesShown(page: Page): Promise<void> {
  return page.locator('section.changes[aria-busy="false"]').waitFor();
}

// First on the file's daemon: the board shows this test's project alone.
test('light and dark follow the OS setting, and text stays readable in both (contrast at least 4.5:1)', async (t) => {
  const { d, project, base } = await setup(t);
  const task = await newTask(d, project.id, 'colours');
  const s = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'stream', prompt: 'talk:1' } })).json;
  await waitSessionEnd(d, s.id);
  const samples = ['main h1', '.card strong', '.card .muted', '.column h2', '.badge.ended', '.sidebar a[aria-current="page"]', '.sidebar .button'];
  const taskSamples = ['.facts dd', '.facts dt', '.turn .status', '.item.text pre', '.actions button', 'label[for="f-prompt"]', '.output .muted'];
  for (const scheme of ['light', 'dark'] as const) {
    const { page, errors } = await openPage(t, await browser(), { colorScheme: scheme });
    await page.goto(`${base}/`);
    await page.locator('.card .badge.ended').waitFor();
    const board = await contrasts(page, samples);
    assert.ok(scheme === 'dark' ? board.page < 0.05 : board.page > 0.85, `${scheme}: the page's background (luminance ${board.page})`);
    await page.locator('.card').click();
    await page.locator('.item.text', { hasText: 'message 1 of 1' }).waitFor();
    const taskPage = await contrasts(page, taskSamples);
    for (const [sel, ratio] of Object.entries({ ...board.out, ...taskPage.out })) assert.ok(ratio >= 4.5, `${scheme}: ${sel} has contrast ${ratio}`);
    assert.deepEqual(errors, [], `${scheme}: no console errors`);
  }
});

test('the dashboard with the keyboard alone: a task, a session, a follow-up and an archive, a focus ring at every stop', async (t) => {
  const { d, project, page, errors, base } = await setup(t);
  await page.goto(`${base}/#/projects/${project.id}`);
  await page.getByRole('heading', { name: project.name }).waitFor();

  await tabTo(page, 'New task');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: /^New task/ }).waitFor();
  // The form starts at its first field (the focus moves once the page has rendered).
  await page.locator('#f-name:focus').waitFor();
  assert.equal((await focused(page))?.name, 'Name');
  await page.keyboard.type('keyboard work');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'keyboard work' }).waitFor();
  await page.locator('.page-head .status.ready').waitFor();

  // A session: the agent chosen by typing its name on the select, the prompt, then the button.
  await tabTo(page, 'Agent');
  await page.keyboard.type('stream');
  await tabTo(page, 'Prompt');
  await page.keyboard.type('talk:3');
  await tabTo(page, 'Start session');
  await page.keyboard.press('Enter');
  const first = page.locator('.turn').first();
  await first.locator('.output[data-ended="true"]').waitFor();
  await first.locator('.item.text', { hasText: 'message 3 of 3' }).waitFor();
  assert.equal((await d.socket('GET', `/api/tasks/${(await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json[0].id}/sessions`)).json[0].agent, 'stream');

  // The raw lines, then a follow-up in the same conversation.
  await tabTo(page, 'Raw lines');
  await page.keyboard.press('Enter');
  await first.locator('.raw .row', { hasText: 'message 1 of 3' }).waitFor();
  await tabTo(page, /^Follow-up to stream/);
  await page.keyboard.type('talk:2');
  await tabTo(page, 'Send');
  await page.keyboard.press('Enter');
  await page.locator('.turn').nth(1).locator('.status.exited').waitFor();
  await changesShown(page);

  // Archive: the button, the confirmation, done.
  await tabTo(page, 'Archive');
  await page.keyboard.press('Enter');
  await page.locator('.page-head .status.archived').waitFor();
  assert.deepEqual(errors, [], 'no console errors');
});

test('no layout shift while output streams, read as turns or as raw lines', async (t) => {
  const { d, project, page, errors, failures, base } = await setup(t);
  const task = await newTask(d, project.id, 'steady');
  await page.goto(`${base}/#/tasks/${task.id}`);
  await page.getByRole('heading', { name: 'steady' }).waitFor();
  // Every layout shift the page makes, with when it happened.
  await page.evaluate(() => {
    (window as any).shifts = [];
    new PerformanceObserver((list) => (window as any).shifts.push(...list.getEntries().map((e: any) => ({ at: e.startTime, value: e.value, moved: e.sources.map((x: any) => `${x.node?.nodeName} "${(x.node?.textContent ?? '').slice(0, 40)}" in .${x.node?.parentElement?.className}`) })))).observe({ type: 'layout-shift', buffered: true });
  });
  for (const [agent, prompt, from, to] of [
    ['stream', 'talk:60', 5, 50],
    ['ticker', '', 5, 50],
  ] as const) {
    await page.selectOption('#f-agent', agent);
    await page.fill('#f-prompt', prompt);
    await page.getByRole('button', { name: 'Start session' }).click();
    const out = page.locator(`section.conversation[aria-label="Conversation with ${agent}"] .output`);
    // From the fifth line to the fiftieth: the page around the output must not move.
    const at = async (n: number) => {
      await page.waitForFunction(([el, n]) => Number((el as HTMLElement).dataset.lines) >= n, [await out.elementHandle(), n] as const, { polling: 'raf' });
      return page.evaluate(() => ({ now: performance.now(), form: document.querySelector('.conversation .followup')!.getBoundingClientRect().top + scrollY }));
    };
    const start = await at(from);
    const end = await at(to);
    const shifts = await page.evaluate(([a, b]: [number, number]) => (window as any).shifts.filter((s: any) => s.at >= a && s.at <= b), [start.now, end.now] as [number, number]);
    assert.deepEqual(shifts, [], `${agent}: no layout shift between line ${from} and line ${to}`);
    assert.equal(end.form, start.form, `${agent}: the follow-up box stays where it was`);
    await out.and(page.locator('[data-ended="true"]')).waitFor();
  }
  assert.deepEqual(errors, [], `no console errors (failed requests: ${failures.join(', ')})`);
  assert.equal(await page.locator('.conversation').count(), 2);
});

test('100,000 lines of one session: a few dozen rows in the page, any line reached by scrolling or the keyboard, the page still answers', async (t) => {
  const { d, project, page, errors, base } = await setup(t);
  const task = await newTask(d, project.id, 'long');
  const s = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'fixture', prompt: 'print:100000' } })).json;
  await waitSessionEnd(d, s.id);
  await page.goto(`${base}/#/tasks/${task.id}`);
  const raw = page.locator('.raw');
  await page.locator('.output[data-lines="100000"][data-ended="true"]').waitFor({ timeout: 120_000 });
  await raw.locator('.row', { hasText: /line 100000\s*$/ }).waitFor();
  const rows = await raw.locator('.row').count();
  assert.ok(rows > 20 && rows < 100, `only the rows in view (and a margin) are in the page: ${rows}`);
  assert.ok((await page.evaluate(() => document.querySelectorAll('*').length)) < 1500, 'the page stays small');

  // The middle, by scrolling; the start and the end, by the keyboard.
  await raw.evaluate((el) => (el.scrollTop = 49_999 * 18));
  await raw.locator('.row', { hasText: /line 50000\s*$/ }).waitFor();
  await raw.focus();
  await page.keyboard.press('Home');
  await raw.locator('.row', { hasText: /line 1\s*$/ }).waitFor();
  assert.ok((await raw.locator('.row').count()) < 100);
  await page.keyboard.press('End');
  await raw.locator('.row', { hasText: /line 100000\s*$/ }).waitFor();

  // The rest of the page still answers: a follow-up box takes typing.
  await page.fill('.followup textarea', 'still here');
  assert.equal(await page.inputValue('.followup textarea'), 'still here');
  assert.deepEqual(errors, [], 'no console errors');
});

test('services, rebase, push, a usage limit on the board, and the teardown log of an archived task', async (t) => {
  const remote = path.join(makeTempDir(t), 'origin.git');
  execFileSync('git', ['init', '-q', '--bare', remote]);
  const { d, repo, project, page, errors, failures, base } = await setup(t, { ports: [3000], services: { web: { command: `exec node ${WEB}` } }, teardown: ['echo tearing down the worktree'] });
  git(repo, 'remote', 'add', 'origin', remote);
  const task = await newTask(d, project.id, 'landing');
  await page.goto(`${base}/#/tasks/${task.id}`);
  await page.getByRole('heading', { name: 'landing' }).waitFor();

  // A service: started, answering on the task's port through the link shown, stopped.
  const services = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Services' }) });
  const web = services.locator('li', { hasText: 'web' });
  await web.getByRole('button', { name: 'Start' }).click();
  await web.locator('.status.running').waitFor();
  const href = (await web.locator('a.port').getAttribute('href'))!;
  assert.equal(href, `http://127.0.0.1:${task.ports['3000'] ?? Object.values(task.ports)[0]}`);
  let answer: any;
  for (let i = 0; i < 50 && !answer; i++) answer = await fetch(href).then((r) => r.json(), () => new Promise((r) => setTimeout(r, 100)));
  assert.equal(answer.task, 'landing');
  await web.getByRole('button', { name: 'Stop' }).click();
  await web.getByRole('button', { name: 'Start' }).waitFor();

  // Rebase onto a base that moved on, then push the branch.
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'base moves on');
  await page.getByRole('button', { name: 'Rebase' }).click();
  await page.locator('.note', { hasText: 'Rebased onto main' }).waitFor();
  assert.equal(git(repo, 'merge-base', 'main', task.branch), git(repo, 'rev-parse', 'main'));
  await page.getByRole('button', { name: 'Push' }).click();
  await page.locator('.note', { hasText: 'Pushed to origin' }).waitFor();
  assert.equal(git(remote, 'rev-parse', task.branch), git(repo, 'rev-parse', task.branch));

  // A usage limit: on the session, and on the board's card when it happens while you are away.
  await page.selectOption('#f-agent', 'stream');
  await page.fill('#f-prompt', 'limit:3600');
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.locator('.turn .badge.limit').waitFor();
  await page.getByRole('link', { name: 'All projects' }).click();
  const again = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'stream', prompt: 'limit:3600' } })).json;
  const card = page.locator('.card', { hasText: 'landing' });
  await card.locator('.badge.limit', { hasText: 'hit a limit' }).waitFor();
  // Each limit queued its conversation's next turn for when the limit resets: queued, not running.
  await card.locator('.badge.queued', { hasText: '2 queued' }).waitFor();
  assert.equal(await card.locator('.badge.running').count(), 0);
  assert.ok((await d.socket('GET', `/api/sessions/${again.id}`)).json.limit_resets_at);

  // Archive: the teardown runs and its log is shown.
  await page.locator('.card', { hasText: 'landing' }).click();
  await changesShown(page);
  await page.getByRole('button', { name: 'Archive' }).click();
  await page.locator('.page-head .status.archived').waitFor();
  const teardown = page.locator('details.panel', { hasText: 'Teardown' });
  await teardown.locator('pre.log', { hasText: 'tearing down the worktree' }).waitFor();
  assert.deepEqual(errors, [], `no console errors (failed requests: ${failures.join(', ')})`);
});

test('calls the agent denied by itself: the turn shows a warning state with each call, not the plain end; the board says so, not "ended"', async (t) => {
  const { d, project, page, errors, failures, base } = await setup(t);
  const task = await newTask(d, project.id, 'refused');
  const denied = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'stream', prompt: 'deny:tee ran.txt </dev/null && echo done' } })).json;
  await waitSessionEnd(d, denied.id);

  // On the board: the card needs you, in the warning colour, and is not among the plain ends.
  await page.goto(`${base}/`);
  const card = page.locator('.card[data-task="refused"]');
  await card.locator('.badge.denied', { hasText: 'calls denied' }).waitFor();
  assert.equal(await card.locator('.badge.ended').count(), 0);

  // On the task's page: the status, a badge, the result and the denied call with its whole input.
  await card.click();
  const turn = page.locator(`.turn[data-session="${denied.id}"]`);
  await turn.locator('.output[data-ended="true"]').waitFor();
  await turn.locator('.status.exited.denied').waitFor();
  assert.equal(await turn.locator('.badge.denied').textContent(), '1 call denied');
  const list = turn.getByRole('region', { name: 'Denied calls' });
  assert.match((await list.textContent())!, /1 call denied by stream itself/);
  const call = list.locator('li code');
  assert.equal(await call.textContent(), 'Bash tee ran.txt </dev/null && echo done');
  assert.deepEqual(JSON.parse((await call.getAttribute('title'))!), { command: 'tee ran.txt </dev/null && echo done', description: 'Run the command' });
  await turn.locator('p.result.denied').waitFor();

  // A plain turn beside it keeps the plain look: the warning is the denial's alone.
  // (unconfined: DESIGN §18's mark, which the confined turn above does not have)
  const plain = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'stream', prompt: 'talk:1', sandbox: false } })).json;
  const other = page.locator(`.turn[data-session="${plain.id}"]`);
  await other.locator('.output[data-ended="true"]').waitFor();
  assert.equal(await other.locator('.denied').count(), 0);
  assert.equal(await other.locator('.badge.unconfined').textContent(), 'unconfined');
  assert.match((await other.locator('.badge.unconfined').getAttribute('title'))!, /^Not confined: sandbox is false \(by the request\)\. The agent runs with your full rights\.$/);
  assert.equal(await turn.locator('.badge.unconfined').count(), 0, 'a confined turn has no such mark');
  const colour = (l: typeof turn) => l.evaluate((el) => getComputedStyle(el).color);
  const warn = await colour(turn.locator('.badge.denied'));
  assert.equal(await colour(turn.locator('.status')), warn);
  assert.notEqual(await colour(other.locator('.status')), warn);
  const border = (l: typeof turn) => l.evaluate((el) => getComputedStyle(el).borderLeftColor);
  assert.equal(await border(turn.locator('p.result')), warn);
  assert.notEqual(await border(other.locator('p.result')), warn);
  const { out } = await contrasts(page, [`.turn[data-session="${denied.id}"] .status`, `.turn[data-session="${denied.id}"] .badge.denied`, '.denials code', '.denials p', '.badge.unconfined']);
  for (const [sel, ratio] of Object.entries(out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);
  assert.deepEqual(errors, [], `no console errors (failed requests: ${failures.join(', ')})`);
});

test('a turn taken over in a terminal (grove takeover) shows as interactive in its conversation, with no output view, running then ended', async (t) => {
  const { d, project, page, errors, failures, base } = await setup(t);
  const task = await newTask(d, project.id, 'by hand');
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'stream', prompt: 'hello' } })).json;
  await waitSessionEnd(d, first.id);
  // This test's process stands in for grove takeover's: while it runs, the session runs.
  const over = await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: process.pid } });
  assert.equal(over.status, 201, over.text);
  const id = over.json.session.id;

  await page.goto(`${base}/#/tasks/${task.id}`);
  const turn = page.locator(`.turn[data-session="${id}"]`);
  await turn.locator('.status.running').waitFor();
  assert.equal(await turn.locator('.badge.interactive').textContent(), 'interactive');
  assert.match((await turn.textContent())!, /Taken over in a terminal \(grove takeover\)/);
  assert.equal(await turn.locator('.output').count(), 0, 'nothing of it is captured');
  assert.equal(await page.locator(`.conversation:has(.turn[data-session="${first.id}"]) .turn`).count(), 2, 'in the same conversation');
  await d.socket('POST', `/api/sessions/${id}/end`, { body: { exit_code: 0 } });
  await turn.locator('.status.exited').waitFor();
  assert.deepEqual(errors, [], `no console errors (failed requests: ${failures.join(', ')})`);
});

test('approval events leave the board\'s sessions as they are: a card still shows its running session after an approval a rule allowed', async (t) => {
  const { d, project, page, errors, base } = await setup(t, { allow: ['Bash(npm test:*)'] });
  const task = await newTask(d, project.id, 'asking');
  const held = path.join(makeTempDir(t), 'gate');
  execFileSync('mkfifo', [held]);
  const s = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'fixture', prompt: `wait:${held}` } })).json;
  t.after(() => d.socket('DELETE', `/api/sessions/${s.id}`));
  await page.goto(`${base}/`);
  const card = page.locator('.card', { hasText: 'asking' });
  await card.locator('.badge.running', { hasText: '1 running' }).waitFor();
  // Allowed by the rule at once: approval.decided alone, no session event after it.
  const asked = await d.socket('POST', `/api/sessions/${s.id}/approvals`, { body: { key: 'toolu_ui', tool: 'Bash', input: { command: 'npm test' } } });
  assert.equal(asked.json.status, 'allowed');
  // A later event shown on the board: the approval's was applied before it.
  await newTask(d, project.id, 'after the approval');
  await page.locator('.card', { hasText: 'after the approval' }).waitFor();
  assert.equal(await card.locator('.badge.running', { hasText: '1 running' }).count(), 1);
  assert.deepEqual(errors, []);
});
