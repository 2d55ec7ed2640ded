/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { AGENT, agentHome, readyTaskOn, waitSessionEnd } from '../helpers/sessions.ts';
import { attach } from '../helpers/terminal.ts';

// The dashboard's terminal (DESIGN §21) in Chromium: a task's shell opened with its button and
// typed into; an agent's terminal session on its card; the screen back after the daemon restarts.

const browser = sharedBrowser();
const TUI = path.join(ROOT, 'test', 'fixtures', 'tui.mjs');

// What the terminal shows: its rows as xterm draws them (the DOM renderer's, one div a row).
function screenText(box: Locator): Promise<string> {
  return box.locator('.xterm-rows').evaluate((rows) => [...rows.children].map((r) => r.textContent ?? '').join('\n'));
}

// Until a row of the terminal passes `check`; else a failure that shows the screen.
async function waitRow(box: Locator, what: string, check: (row: string) => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const rows = (await screenText(box)).split('\n').map((r) => r.trimEnd());
    if (rows.some(check)) return;
    if (Date.now() > end) assert.fail(`no row ${what} on the screen:\n${rows.join('\n').trimEnd()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Typed as a person would: into the terminal that has the focus.
async function typeLine(page: Page, text: string): Promise<void> {
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

test("a task's shell: the Terminal button opens it focused, a command typed in Chromium runs in the worktree, a second page in the dark scheme gets the screen, exit ends it", async (t) => {
  const d = await startDaemon(t, { home: agentHome(t) });
  const { task } = await readyTaskOn(d, t);
  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  await page.getByRole('heading', { name: task.name }).waitFor();
  assert.equal(await page.locator('section[aria-label="Terminals"]').count(), 0, 'no panel before a shell');

  await page.getByRole('button', { name: 'Terminal', exact: true }).click();
  const card = page.locator('section[aria-label="Terminals"] .turn');
  await card.locator('.terminal[data-state="live"]').waitFor();
  assert.equal(await card.locator('header strong').textContent(), 'shell');
  const shell = (await d.socket('GET', `/api/sessions/${await card.getAttribute('data-session')}`)).json;
  // An interactive shell outlives its daemon: killed through it if the test fails before its exit.
  t.after(() => d.socket('DELETE', `/api/sessions/${shell.id}`).catch(() => {}));
  assert.equal(shell.kind, 'terminal');
  assert.equal(shell.agent, null);
  // Focused: what is typed goes to the shell, once it has drawn its prompt.
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('xterm-helper-textarea')), true);
  await waitRow(card, 'with a prompt', (row) => row.trim() !== '');
  await typeLine(page, 'echo grove-$((6*7))');
  await waitRow(card, 'grove-42', (row) => row === 'grove-42');
  // In the task's worktree.
  await typeLine(page, 'pwd');
  const worktree = `/${task.worktree_path.replace(/\/$/, '')}`;
  await waitRow(card, `ending in ${worktree}`, (row) => row.endsWith(worktree));
  // The box is fitted: the program was told a size that fills it (not xterm's 80 × 24).
  const size = await page.locator('.terminal .xterm-screen').evaluate((el) => el.getBoundingClientRect().width);
  assert.ok(size > 700, `the terminal is ${size}px wide`);

  // A second page, in the dark scheme, attaches beside it: the screen as it is, in dark colours,
  // readable in both.
  const dark = await openPage(t, await browser(), { colorScheme: 'dark' });
  await dark.page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  const darkCard = dark.page.locator('section[aria-label="Terminals"] .turn');
  await waitRow(darkCard, 'grove-42', (row) => row === 'grove-42');
  for (const [scheme, p] of [['light', page], ['dark', dark.page]] as const) {
    const { out, page: background } = await contrasts(p, ['.terminal .xterm-rows']);
    assert.ok(out['.terminal .xterm-rows']! >= 4.5, `${scheme}: the terminal's text has contrast ${out['.terminal .xterm-rows']}`);
    const shade = await p.locator('.terminal .xterm-scrollable-element').evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(shade, scheme === 'dark' ? 'rgb(19, 21, 22)' : 'rgb(241, 243, 240)', `${scheme}: the page's --code-bg (page luminance ${background})`);
  }
  assert.deepEqual(dark.errors, [], dark.failures.join('\n'));

  await typeLine(page, 'exit 3');
  await card.locator('.terminal[data-state="exited"]').waitFor();
  assert.equal(await card.locator('.terminal [role="status"]').textContent(), 'exited 3');
  const ended = await waitSessionEnd(d, shell.id);
  assert.equal(ended.exit_code, 3);
  await card.locator('.status.failed, .status.exited').waitFor();
  assert.match(await screenText(card), /grove-42/, 'the screen stays after the end');
  assert.deepEqual(errors, [], failures.join('\n'));
});

test("an agent's terminal session shows its terminal on its card, told the box's size, no follow-up box while it runs; through a daemon restart it says it is reconnecting, keys typed meanwhile arrive, nothing is shown twice", { skip: existsSync(TUI) ? false : 'test/fixtures/tui.mjs is not there' }, async (t) => {
  // Headless, the fixture; in a terminal, the stand-in TUI with the prompt as its title.
  const home = agentHome(t, { agents: { tui: { command: [AGENT, '{prompt}'], terminal: [process.execPath, TUI, '{prompt}'] } } });
  const d = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d, t, { agent: 'tui' });
  // Running before the page opens: what the page gets first is the screen the daemon kept.
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'tui', prompt: 'the stand-in', interface: 'terminal' } });
  assert.equal(r.status, 201, r.text);
  // Killed through the daemon of the moment if the test fails before q (it outlives a daemon).
  let live = d;
  t.after(() => live.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const first = await attach(t, d, r.json.id);
  await first.waitText('ready');
  first.close();
  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  const card = page.locator(`.turn[data-session="${r.json.id}"]`);
  await card.locator('.terminal[data-state="live"]').waitFor();
  await card.locator('.badge', { hasText: 'terminal' }).waitFor();
  await waitRow(card, 'with the title', (row) => row === 'the stand-in');
  assert.equal(await page.locator('form[aria-label="Follow-up"]').count(), 0, 'the terminal is the input while it runs');
  await page.locator('.conversation .hint', { hasText: 'runs in its terminal' }).waitFor();
  // The program was told the box's size, and no other after it: not the size of the screen the
  // daemon kept, which the page draws before fitting it again.
  const fitted = (await card.locator('.terminal-box').getAttribute('data-size'))!;
  await waitRow(card, `size ${fitted}`, (row) => row === `size ${fitted}`);
  // (Its first line may be the size it started at, before the page attached.)
  const sizes = (await screenText(card)).split('\n').filter((row) => row.startsWith('size ')).map((row) => row.trim());
  const told = sizes[0] === `size ${fitted}` ? sizes : sizes.slice(1);
  assert.deepEqual(told, [`size ${fitted}`], `the program was told: ${sizes.join(', ')}`);
  await card.locator('.xterm-screen').click();
  await page.keyboard.type('x');
  await waitRow(card, 'key "x"', (row) => row === 'key "x"');

  // The daemon restarts on the same port: the card says it is reconnecting, then it is live again
  // with nothing shown twice.
  const port = d.port!;
  await d.stop();
  await card.locator('.terminal[data-state="reconnecting"] .reconnecting', { hasText: 'reconnecting…' }).waitFor();
  // A key typed meanwhile is held, and reaches the program once the daemon is back.
  await card.locator('.xterm-screen').click();
  await page.keyboard.type('z');
  const d2 = (live = await startDaemon(t, { home, env: { GROVE_PORT: String(port) } }));
  await card.locator('.terminal[data-state="live"]').waitFor({ timeout: 30_000 });
  await waitRow(card, 'key "z"', (row) => row === 'key "z"');
  await page.keyboard.type('y');
  await waitRow(card, 'key "y"', (row) => row === 'key "y"');
  const rows = (await screenText(card)).split('\n');
  assert.equal(rows.filter((row) => row.trim() === 'key "x"').length, 1, rows.join('\n'));
  // q quits the stand-in with status 3.
  await page.keyboard.type('q');
  await card.locator('.terminal[data-state="exited"]').waitFor();
  assert.equal(await card.locator('.terminal [role="status"]').textContent(), 'exited 3');
  assert.equal((await waitSessionEnd(d2, r.json.id)).exit_code, 3);
  // While the daemon was away the browser logged its streams cut and its connections refused;
  // nothing else.
  assert.deepEqual(
    errors.filter((e) => !/ERR_CONNECTION_REFUSED|ERR_INCOMPLETE_CHUNKED_ENCODING|WebSocket connection to .* failed/.test(e)),
    [],
    failures.join('\n'),
  );
});

test("a terminal session's conversation, read from its agent's transcript, shows under its terminal; open once it has ended", async (t) => {
  const claude = path.join(ROOT, 'test', 'fixtures', 'claude-tui', 'claude');
  const home = agentHome(t, { agents: { claudish: { command: [AGENT, '{prompt}'], terminal: [claude, '--session-id', '{session}', '--', '{prompt}'], interactive: [claude, '--resume', '{session}'], sandbox: { write: ['~/.claude'] } } } });
  const d = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d, t, { agent: 'claudish' });
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'claudish', prompt: 'tell me', interface: 'terminal' } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  const card = page.locator(`.turn[data-session="${r.json.id}"]`);
  await card.locator('.terminal[data-state="live"]').waitFor();
  await waitRow(card, 'with the answer', (row) => row === 'Answer to: tell me');
  // Its conversation, from the transcript, closed while the screen shows it.
  const transcript = card.locator('details.transcript');
  await transcript.waitFor();
  assert.equal(await transcript.getAttribute('open'), null);
  assert.match((await transcript.locator('summary').textContent())!, /Claude Code's transcript/);
  await card.locator('.xterm-screen').click();
  await page.keyboard.type('q');
  await card.locator('.terminal[data-state="exited"]').waitFor();
  await card.locator('details.transcript[open]').waitFor();
  await transcript.locator('.item.text', { hasText: 'Answer to: tell me' }).waitFor();
  assert.deepEqual([errors, failures], [[], []]);
});

test("copy: text selected in the terminal is copied by Ctrl+C and by Ctrl+Shift+C; Ctrl+C without a selection is the program's interrupt", async (t) => {
  // An interactive shell outlives its daemon: killed through it before the daemon's own cleanup
  // (registered after this one) stops it.
  let id: string | null = null;
  let d: TestDaemon | null = null;
  t.after(() => id !== null && d?.socket('DELETE', `/api/sessions/${id}`).catch(() => {}));
  d = await startDaemon(t, { home: agentHome(t) });
  const { task } = await readyTaskOn(d, t);
  const { page, errors, failures } = await openPage(t, await browser());
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${d.port}` });
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  await page.getByRole('button', { name: 'Terminal', exact: true }).click();
  const card = page.locator('section[aria-label="Terminals"] .turn');
  await card.locator('.terminal[data-state="live"]').waitFor();
  id = (await card.getAttribute('data-session'))!;
  await waitRow(card, 'with a prompt', (row) => row.trim() !== '');
  await typeLine(page, 'echo copy-$((6*7))-me');
  await waitRow(card, 'copy-42-me', (row) => row === 'copy-42-me');
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  // A word selected by a double click (xterm's own selection), copied as the browser copies.
  const select = async () => {
    // At the row's place: xterm's screen above the rows takes the pointer.
    const box = (await card.locator('.xterm-rows > div', { hasText: /^copy-42-me\s*$/ }).boundingBox())!;
    await page.mouse.dblclick(box.x + 12, box.y + box.height / 2);
  };
  for (const keys of ['Control+C', 'Control+Shift+C']) {
    await page.evaluate(() => navigator.clipboard.writeText('before'));
    await select();
    await page.keyboard.press(keys);
    assert.equal(await clipboard(), 'copy-42-me', keys);
  }
  // Without a selection, Ctrl+C goes to the shell: a line being typed is interrupted.
  // Each step once the shell has shown the last: keys typed on a loaded machine before the
  // focus or the shell's echo came arrived cut or run together.
  await card.locator('.xterm-screen').click({ position: { x: 5, y: 5 } });
  await page.waitForFunction(() => document.activeElement?.classList.contains('xterm-helper-textarea') === true);
  await page.keyboard.type('sleep 30');
  await waitRow(card, 'with the typed line', (row) => row.endsWith('sleep 30'));
  await page.keyboard.press('Control+C');
  await waitRow(card, 'with the line interrupted', (row) => row.endsWith('sleep 30^C'));
  await typeLine(page, 'echo after-$((1+1))');
  await waitRow(card, 'after-2', (row) => row === 'after-2');
  assert.equal(await clipboard(), 'copy-42-me', 'nothing copied');
  await typeLine(page, 'exit');
  await waitSessionEnd(d, id);
  assert.deepEqual([errors, failures], [[], []]);
});
