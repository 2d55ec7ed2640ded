/// <reference lib="dom" />
// The person in the loop on the dashboard (DESIGN §15): a card per pending approval on the task's
// page, a "needs you" badge on the board, both gone once the approval is answered anywhere.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { addProject, DAEMON_ENTRY, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { contrasts, focused, openPage, sharedBrowser, tabTo } from '../helpers/browser.ts';
import { sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const browser = sharedBrowser();
const daemon = sharedAgentDaemon();
const run = promisify(execFile);

// A task whose fixture session is held running until the test ends: approvals can be asked for it.
async function heldSession(t: test.TestContext, d: TestDaemon, name: string) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name } })).json;
  assert.equal(task.status, 'ready');
  const gate = path.join(makeTempDir(t), 'gate');
  execFileSync('mkfifo', [gate]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'fixture', prompt: `wait:${gate}` } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`));
  return { project, task, session: r.json };
}

async function ask(d: TestDaemon, sessionId: string, body: Record<string, unknown>): Promise<any> {
  const r = await d.socket('POST', `/api/sessions/${sessionId}/approvals`, { body });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status, 'pending');
  return r.json;
}

const COMMAND = 'npm test -- --grep "the whole command, quotes and all" && rm -rf build/ && echo done';

test('an approval shows live as a card with the whole command and a "needs you" badge; Allow decides it and both go; a CLI deny removes the card without a reload', async (t) => {
  const d = await daemon();
  const { task, session } = await heldSession(t, d, 'asking');
  const base = `http://127.0.0.1:${d.port}`;
  const { page: board, errors: boardErrors } = await openPage(t, await browser());
  await board.goto(`${base}/`);
  const card = board.locator('.card', { hasText: 'asking' });
  await card.locator('.badge.running').waitFor();
  assert.equal(await card.locator('.badge.approval').count(), 0);

  const { page, errors, failures } = await openPage(t, await browser());
  await page.goto(`${base}/#/tasks/${task.id}`);
  await page.getByRole('heading', { name: 'asking' }).waitFor();

  // Asked after both pages loaded: the event alone brings the card and the badge.
  const first = await ask(d, session.id, { key: 'toolu_1', tool: 'Bash', input: { command: COMMAND, description: 'run the tests' } });
  const region = page.getByRole('region', { name: /fixture asks to use Bash/ });
  await region.waitFor();
  assert.equal(await region.locator('pre code').first().textContent(), COMMAND);
  assert.match((await region.textContent()) ?? '', /run the tests/);
  await card.locator('.badge.approval', { hasText: 'needs you' }).waitFor();

  // Readable, and reached and pressed from the keyboard.
  const { out } = await contrasts(page, ['.approval h2', '.approval .badge.approval', '.approval pre code', '.approval label', '.approval button.danger']);
  for (const [sel, ratio] of Object.entries(out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);
  await tabTo(page, 'Allow');
  assert.equal((await focused(page))?.name, 'Allow');
  await page.keyboard.press('Enter');
  await region.waitFor({ state: 'detached' });
  const got = await d.socket('GET', `/api/approvals/${first.id}`);
  assert.equal(got.json.status, 'allowed');
  assert.equal(got.json.remember, null);
  await card.locator('.badge.approval').waitFor({ state: 'detached' });

  // Another, denied from the CLI: the open page drops its card without a reload.
  const second = await ask(d, session.id, { key: 'toolu_2', tool: 'Write', input: { file_path: 'notes/todo.md', content: 'line one\nline two\n' } });
  const writeCard = page.getByRole('region', { name: /fixture asks to use Write/ });
  await writeCard.waitFor();
  assert.match((await writeCard.textContent()) ?? '', /notes\/todo\.md/);
  assert.equal(await writeCard.locator('pre code').first().textContent(), 'line one\nline two\n');
  await card.locator('.badge.approval').waitFor();
  const marker = await page.evaluate(() => ((window as any).__same = Math.random()));
  const cli = await run(process.execPath, [DAEMON_ENTRY, 'deny', second.id, '-m', 'not that file'], { env: { ...process.env, GROVE_HOME: d.home } });
  assert.match(cli.stdout, /denied/);
  await writeCard.waitFor({ state: 'detached' });
  await card.locator('.badge.approval').waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => (window as any).__same), marker, 'the same page, not reloaded');
  assert.equal((await d.socket('GET', `/api/approvals/${second.id}`)).json.reason, 'not that file');
  assert.deepEqual(errors, [], `no console errors (failed requests: ${failures.join(', ')})`);
  assert.deepEqual(boardErrors, []);
});

test('a pending approval is on the page at load; Allow for this session remembers it; and a question is answered in words', async (t) => {
  const d = await daemon();
  const { task, session } = await heldSession(t, d, 'questions');
  const asked = await ask(d, session.id, { key: 'toolu_a', tool: 'WebFetch', input: { url: 'https://example.com/docs', prompt: 'read the docs' } });
  const question = await ask(d, session.id, {
    key: 'toolu_q',
    kind: 'question',
    tool: 'AskUserQuestion',
    input: { questions: [{ header: 'Storage', question: 'Which database should I use?', options: [{ label: 'PostgreSQL', description: 'the one the project runs' }, { label: 'SQLite' }], multiSelect: false }] },
  });
  const base = `http://127.0.0.1:${d.port}`;
  const { page, errors } = await openPage(t, await browser(), { colorScheme: 'dark' });
  await page.goto(`${base}/#/tasks/${task.id}`);

  // Asked before the page loaded: GET /api/approvals?status=pending brings it.
  const fetchCard = page.getByRole('region', { name: /fixture asks to use WebFetch/ });
  await fetchCard.waitFor();
  assert.match((await fetchCard.textContent()) ?? '', /https:\/\/example\.com\/docs/);
  assert.match((await fetchCard.textContent()) ?? '', /read the docs/);

  // The question: no "Allow for this session", an answer in words.
  const qCard = page.getByRole('region', { name: /fixture asks you/ });
  await qCard.waitFor();
  const asks = (await qCard.textContent()) ?? '';
  for (const part of ['Storage', 'Which database should I use?', 'PostgreSQL — the one the project runs', 'SQLite']) assert.ok(asks.includes(part), `the question's ${part} in ${asks}`);
  // Readable in the dark scheme too.
  const { out } = await contrasts(page, ['.approval h2', '.approval .badge.approval', '.approval pre code', '.approval .question', '.approval .muted', '.approval label']);
  for (const [sel, ratio] of Object.entries(out)) assert.ok(ratio >= 4.5, `dark: ${sel} has contrast ${ratio}`);
  assert.equal(await qCard.getByRole('button', { name: 'Allow for this session' }).count(), 0);
  assert.ok(await qCard.getByRole('button', { name: 'Answer' }).isDisabled(), 'no answer without words');
  await qCard.getByLabel('Your answer').fill('PostgreSQL');
  await qCard.getByRole('button', { name: 'Answer' }).click();
  await qCard.waitFor({ state: 'detached' });
  const answered = (await d.socket('GET', `/api/approvals/${question.id}`)).json;
  assert.deepEqual([answered.status, answered.answer], ['allowed', 'PostgreSQL']);

  await fetchCard.getByRole('button', { name: 'Allow for this session' }).click();
  await fetchCard.waitFor({ state: 'detached' });
  const remembered = (await d.socket('GET', `/api/approvals/${asked.id}`)).json;
  assert.deepEqual([remembered.status, remembered.remember], ['allowed', 'session']);

  // An edit: the file, the lines it removes and adds; denied from the page with a message.
  const edit = await ask(d, session.id, { key: 'toolu_e', tool: 'Edit', input: { file_path: 'src/app.ts', old_string: 'const a = 1;\nconst b = 2;', new_string: 'const a = 3;' } });
  const editCard = page.getByRole('region', { name: /fixture asks to use Edit/ });
  await editCard.waitFor();
  assert.match((await editCard.textContent()) ?? '', /src\/app\.ts/);
  assert.equal(await editCard.locator('pre.edit').textContent(), '- const a = 1;\n- const b = 2;\n+ const a = 3;');
  await editCard.getByLabel(/Message to the agent/).fill('keep b');
  await editCard.getByRole('button', { name: 'Deny' }).click();
  await editCard.waitFor({ state: 'detached' });
  const denied = (await d.socket('GET', `/api/approvals/${edit.id}`)).json;
  assert.deepEqual([denied.status, denied.reason], ['denied', 'keep b']);
  assert.deepEqual(errors, []);
});

test("a question's options are buttons that answer with their label, from the keyboard, readable in both schemes; ACP's options too; free text stays", async (t) => {
  const d = await daemon();
  const { task, session } = await heldSession(t, d, 'choices');
  const questions = [{ header: 'Storage', question: 'Which database should I use?', options: [{ label: 'PostgreSQL', description: 'the one the project runs' }, { label: 'SQLite' }], multiSelect: false }];
  const claude = await ask(d, session.id, { key: 'toolu_c1', kind: 'question', tool: 'AskUserQuestion', input: { questions } });
  // An ACP agent's question as grove's ACP bridge records an elicitation: its form's one field's choices.
  const acp = await ask(d, session.id, {
    key: 'acp_c2',
    kind: 'question',
    tool: 'elicitation',
    input: { question: 'Deploy now?', requestedSchema: { type: 'object', properties: { when: { type: 'string', enum: ['Deploy', 'Wait until Monday'] } }, required: ['when'] } },
  });
  // In `read`, Claude Code asks to leave plan mode with its plan, shown as written.
  const plan = '1. Add the table\n2. Write the migration';
  await ask(d, session.id, { key: 'toolu_c3', tool: 'ExitPlanMode', input: { plan } });
  const base = `http://127.0.0.1:${d.port}`;
  for (const colorScheme of ['light', 'dark'] as const) {
    const { page, errors } = await openPage(t, await browser(), { colorScheme });
    await page.goto(`${base}/#/tasks/${task.id}`);
    const cards = page.getByRole('region', { name: /fixture asks you/ });
    await cards.nth(1).waitFor();
    const first = cards.nth(0);
    for (const name of ['PostgreSQL', 'SQLite']) await first.getByRole('button', { name, exact: true }).waitFor();
    assert.match((await first.textContent()) ?? '', /PostgreSQL — the one the project runs/);
    const { out } = await contrasts(page, ['.approval .choices button', '.approval .choices .muted']);
    for (const [sel, ratio] of Object.entries(out)) assert.ok(ratio >= 4.5, `${colorScheme}: ${sel} has contrast ${ratio}`);
    assert.ok(await first.getByLabel('Your answer').isVisible(), 'the free-text answer stays');
    const planCard = page.getByRole('region', { name: /fixture asks to use ExitPlanMode/ });
    assert.equal(await planCard.locator('pre code').first().textContent(), plan);
    assert.equal(await planCard.locator('.choices').count(), 0, 'a tool call has no options to choose');
    assert.deepEqual(errors, []);
    if (colorScheme === 'light') continue;

    // From the keyboard: Tab to an option, Enter answers with its label.
    await tabTo(page, 'SQLite');
    await page.keyboard.press('Enter');
    await page.locator(`[data-approval="${claude.id}"]`).waitFor({ state: 'detached' });
    const answered = (await d.socket('GET', `/api/approvals/${claude.id}`)).json;
    assert.deepEqual([answered.status, answered.answer], ['allowed', 'SQLite']);

    const second = page.locator(`[data-approval="${acp.id}"]`);
    assert.match((await second.textContent()) ?? '', /Deploy now\?/);
    await second.getByRole('button', { name: 'Wait until Monday' }).click();
    await second.waitFor({ state: 'detached' });
    const chosen = (await d.socket('GET', `/api/approvals/${acp.id}`)).json;
    assert.deepEqual([chosen.status, chosen.answer], ['allowed', 'Wait until Monday']);
  }
});

test("a Codex question (grove's Codex bridge asks each on its own: input {question, header, options}) shows its header, its text and its options as buttons, not as JSON", async (t) => {
  const d = await daemon();
  const { task, session } = await heldSession(t, d, 'codex asks');
  const input = { question: 'Which database should I use?', header: 'Storage', options: [{ label: 'PostgreSQL', description: 'the one the project runs' }, { label: 'SQLite', description: 'a file' }] };
  const asked = await ask(d, session.id, { key: 'codex:turn-1:call_q:db', kind: 'question', tool: 'AskUserQuestion', input });
  const { page, errors } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  const card = page.locator(`[data-approval="${asked.id}"]`);
  await card.locator('.question').waitFor();
  assert.equal(await card.locator('.question').textContent(), 'Which database should I use?');
  assert.deepEqual(await card.locator('.choices button').allTextContents(), ['PostgreSQL', 'SQLite']);
  assert.equal(await card.locator('.approval-input .muted.small').first().textContent(), 'Storage');
  assert.match((await card.textContent()) ?? '', /SQLite — a file/);
  assert.equal(await card.locator('.approval-input pre').count(), 0, 'nothing left over as JSON');
  await card.getByRole('button', { name: 'SQLite', exact: true }).click();
  await card.waitFor({ state: 'detached' });
  const answered = (await d.socket('GET', `/api/approvals/${asked.id}`)).json;
  assert.deepEqual([answered.status, answered.answer], ['allowed', 'SQLite']);
  assert.deepEqual(errors, []);
});

test('an answer to an approval decided meanwhile shows the API\'s message, and the card goes when approval.decided arrives', async (t) => {
  const d = await daemon();
  const { task, session } = await heldSession(t, d, 'raced');
  const asked = await ask(d, session.id, { key: 'toolu_r', tool: 'Bash', input: { command: 'make deploy' } });
  const base = `http://127.0.0.1:${d.port}`;
  const { page, failures } = await openPage(t, await browser());
  // The page's event stream held back: it shows the approval as loaded while the CLI decides it.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/events?**', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`${base}/#/tasks/${task.id}`);
  const region = page.getByRole('region', { name: /fixture asks to use Bash/ });
  await region.waitFor();
  const cli = await run(process.execPath, [DAEMON_ENTRY, 'approve', asked.id], { env: { ...process.env, GROVE_HOME: d.home } });
  assert.match(cli.stdout, /allowed/);
  await region.getByRole('button', { name: 'Deny' }).click();
  await region.getByRole('alert').filter({ hasText: 'APPROVAL_DECIDED' }).waitFor();
  // A failure is recorded once its body is read, which may come after the alert is drawn.
  await until(() => failures.length, 'the failed answer recorded');
  assert.deepEqual(failures.map((f) => f.split(' ').slice(0, 2).join(' ')), ['409 POST']);
  release();
  await region.waitFor({ state: 'detached' });
  assert.equal((await d.socket('GET', `/api/approvals/${asked.id}`)).json.status, 'allowed', 'the late deny changed nothing');
});

test('a connection the sandbox holds (kind network, DESIGN §18) is a card naming its host and port, with Allow for this project; the project rule then answers the next ask at once', async (t) => {
  const d = await daemon();
  const { task, session } = await heldSession(t, d, 'connecting');
  const asked = await ask(d, session.id, { key: 'net-1', kind: 'network', tool: 'Network', input: { host: 'Registry.npmjs.org', port: 443 } });
  const tool = await ask(d, session.id, { key: 'toolu_n', tool: 'Bash', input: { command: 'npm ci' } });
  const { page, errors } = await openPage(t, await browser());
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);

  const card = page.getByRole('region', { name: 'fixture asks to connect to registry.npmjs.org:443 needs you' });
  await card.waitFor();
  assert.equal(await card.locator('.approval-input .input-target').textContent(), 'registry.npmjs.org:443');
  assert.equal(await card.locator('.approval-input pre').count(), 0, 'nothing left over as JSON');
  const toolCard = page.getByRole('region', { name: /fixture asks to use Bash/ });
  assert.equal(await toolCard.getByRole('button', { name: 'Allow for this project' }).count(), 0, 'a tool is allowed once or for the session');

  await card.getByRole('button', { name: 'Allow for this project' }).click();
  await card.waitFor({ state: 'detached' });
  const decided = (await d.socket('GET', `/api/approvals/${asked.id}`)).json;
  assert.deepEqual([decided.status, decided.remember], ['allowed', 'project']);
  const again = await d.socket('POST', `/api/sessions/${session.id}/approvals`, { body: { key: 'net-2', kind: 'network', tool: 'Network', input: { host: 'registry.npmjs.org', port: 443 } } });
  assert.deepEqual([again.status, again.json.status, again.json.reason], [201, 'allowed', 'allowed by the rule Network(registry.npmjs.org:443)']);
  const bad = await d.socket('POST', `/api/sessions/${session.id}/approvals`, { body: { key: 'net-3', kind: 'network', tool: 'Network', input: { host: 'registry.npmjs.org', port: 70000 } } });
  assert.deepEqual([bad.status, bad.json.code, bad.json.errors], [400, 'VALIDATION_FAILED', [{ path: '/input/port', message: 'must be <= 65535' }]]);
  await d.socket('POST', `/api/approvals/${tool.id}`, { body: { nonce: tool.nonce, decision: 'deny' } });
  assert.deepEqual(errors, []);
});
