// The dashboard as a new user first meets it: a task made from All projects, and a daemon that
// finds no agent CLI.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { contrasts, openPage, sharedBrowser, tabTo } from '../helpers/browser.ts';

const browser = sharedBrowser();
// One daemon for both tests, on a PATH with only what the daemon and git need: none of the
// built-in agents' commands. The first test starts from its empty board.
const daemon = sharedDaemon((c) => {
  const bin = makeTempDir(c, 'grove-bin-');
  for (const tool of ['git', 'sh']) symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool));
  symlinkSync(process.execPath, path.join(bin, 'node'));
  return { env: { PATH: bin } };
});

test('All projects offers New task: how to add a project when there is none, the one project chosen, a choice between two, and the new task opened', async (t) => {
  const d = await daemon();
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

test('with no agent CLI on the daemon PATH, the new-session form names the agents, says none is installed and how to install one, and cannot start', async (t) => {
  const d = await daemon();
  const agents = (await d.socket('GET', '/api/agents')).json;
  assert.ok(agents.length > 0 && agents.every((a: any) => !a.available), `no agent available: ${JSON.stringify(agents)}`);
  const project = await addProject(d, makeRepo(t, { files: { 'README.md': 'hello\n' } }));
  const created = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'no agents' } });
  assert.equal(created.status, 201, created.text);

  for (const scheme of ['light', 'dark'] as const) {
    const { page } = await openPage(t, await browser(), { colorScheme: scheme });
    await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${created.json.id}`);
    await page.locator('#no-agents').waitFor();
    for (const [sel, ratio] of Object.entries((await contrasts(page, ['#no-agents p', '#no-agents li', '#no-agents code'])).out)) assert.ok(ratio >= 4.5, `${scheme}: ${sel} has contrast ${ratio}`);
  }
  const { page, errors } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${created.json.id}`);
  await page.locator('.page-head .status.ready').waitFor();
  const why = page.locator('#no-agents');
  await why.waitFor();
  const text = (await why.textContent()) ?? '';
  assert.match(text, /No agent is installed/);
  assert.match(text, /none of their commands is on the daemon's PATH/);
  for (const a of agents) assert.ok(text.includes(a.name), `names ${a.name}: ${text}`);
  for (const command of ['npm i -g @anthropic-ai/claude-code', 'npm i -g @openai/codex', 'npm i -g @google/gemini-cli', 'npm i -g opencode-ai', 'npm i -g @sourcegraph/amp', 'npm i -g @github/copilot', 'npm i -g @qwen-code/qwen-code']) {
    assert.ok(text.includes(command), `says how to install: ${command}`);
  }
  assert.match(text, /your own agent under agents in the user config/);
  for (const a of agents) assert.equal(await page.locator(`#f-agent option[value="${a.name}"]`).textContent(), `${a.name} (not installed)`);
  const start = page.getByRole('button', { name: 'Start session' });
  assert.equal(await start.isDisabled(), true, 'nothing to start');
  assert.equal(await start.getAttribute('aria-describedby'), 'no-agents', 'the button points to the reason');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${created.json.id}/sessions`)).json, []);
  assert.deepEqual(errors, []);
});

test('with no agent CLI on the daemon PATH, the New task form with a first prompt says so, and the missing agent is said at the Agent field with no task made', async (t) => {
  const d = await daemon();
  // The project's default agent is one grove knows, not installed here.
  const project = await addProject(d, makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'claude' }) } }));
  const { page } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/projects/${project.id}/new-task`);
  await page.getByRole('heading', { name: /^New task/ }).waitFor();
  assert.equal(await page.locator('#no-agents').count(), 0, 'no session, nothing to say about agents');
  await page.fill('#f-name', 'no agent to run');
  await page.getByLabel('First prompt').fill('do the work');
  await page.locator('#no-agents', { hasText: 'No agent is installed' }).waitFor();
  await page.getByRole('button', { name: 'Create task' }).click();
  const why = page.locator('#f-agent-error');
  await why.waitFor();
  assert.match((await why.textContent()) ?? '', /\(agent claude\) is not on the daemon's PATH$/);
  assert.equal(await page.getAttribute('#f-agent', 'aria-invalid'), 'true');
  assert.deepEqual((await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json, [], 'nothing made');
});
