// The dashboard of a team (DESIGN §14.2) in Chromium: every task with its host's name, a
// repository's projects on several hosts under one heading, an offline host's tasks greyed live.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contrasts, openPage, sharedBrowser } from '../helpers/browser.ts';
import { addProject } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { startTeam, type TeamHost } from '../helpers/team.ts';

const browser = sharedBrowser();

test("alpha's dashboard: tasks of both hosts named by host, one heading for the repository, beta's task greyed once beta dies", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'] });
  const [alpha, beta] = team.hosts as [TeamHost, TeamHost];
  for (const h of team.hosts) {
    const r = await h.daemon.socket('POST', '/api/tasks', { body: { project_id: h.project.id, name: `work on ${h.name}` } });
    assert.equal(r.status, 201, r.text);
  }
  // A repository without origin, on alpha alone: a project of its own in the list, as today.
  const lone = await addProject(alpha.daemon, makeRepo(t));
  assert.equal((await alpha.daemon.socket('POST', '/api/tasks', { body: { project_id: lone.id, name: 'lone work' } })).status, 201);

  const { page, errors, failures } = await openPage(t, await browser());
  const asked: string[] = [];
  page.on('request', (r) => asked.push(new URL(r.url()).pathname));
  await page.goto(`http://127.0.0.1:${alpha.daemon.port}/`);
  const cardOf = (h: TeamHost) => page.locator(`.card[data-task="work on ${h.name}"]`);
  for (const h of team.hosts) assert.equal((await cardOf(h).locator('.host').textContent())?.trim(), `on ${h.name}`);

  const group = page.locator(`.sidebar li.repo[data-repository="${team.repository}"]`);
  assert.equal(await group.locator('.repo-name').getAttribute('title'), team.repository);
  assert.deepEqual((await group.locator('li a').allTextContents()).sort(), [`${alpha.project.name} on alpha`, `${beta.project.name} on beta`]);
  assert.equal(await page.locator('.sidebar li.repo').count(), 1, 'one heading: the repository of both hosts');
  assert.equal((await page.locator(`.sidebar a[href="#/projects/${lone.id}"]`).textContent())?.trim(), `${lone.name} on alpha`);
  assert.equal(await page.locator('.card.offline').count(), 0);

  // The heading opens the repository's board: the tasks of both hosts, not the lone project's.
  await page.locator('.card', { hasText: 'lone work' }).waitFor();
  await group.locator('a.repo-name').click();
  await page.locator('main h1', { hasText: team.repository.split('/').slice(-2).join('/') }).waitFor();
  assert.deepEqual((await page.locator('.card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-task')))).sort(), ['work on alpha', 'work on beta']);
  // A new task's project is chosen with its host.
  await page.goto(`http://127.0.0.1:${alpha.daemon.port}/#/new-task`);
  assert.deepEqual((await page.locator('#f-project_id option').allTextContents()).slice(1).sort(), [`${alpha.project.name} on alpha`, `${beta.project.name} on beta`, `${lone.name} on alpha`].sort());
  await page.goto(`http://127.0.0.1:${alpha.daemon.port}/`);

  // beta dies (kill -9): once its heartbeat is 15 s old, alpha records host.offline, and the
  // event greys beta's task on alpha's page without a reload.
  await beta.daemon.stop('SIGKILL');
  await page.locator(`.card.offline[data-task="work on beta"]`).waitFor({ timeout: 60_000 });
  assert.match((await cardOf(beta).locator('.host').textContent()) ?? '', /on beta \(offline\)/);
  assert.equal(await cardOf(beta).getAttribute('title'), 'host beta is offline');
  assert.equal(await cardOf(alpha).getAttribute('class'), 'card', "alpha's task stays as it was");
  // Greyed, and still readable.
  const { out } = await contrasts(page, ['.card.offline strong', '.card.offline .host']);
  for (const [sel, ratio] of Object.entries(out)) assert.ok(ratio >= 4.5, `${sel} has contrast ${ratio}`);

  // The task page names its host too.
  await cardOf(beta).click();
  await page.locator('.facts dd', { hasText: 'beta (offline)' }).waitFor();
  // What only beta can read is not asked of it while it is away: the page says so instead.
  // (The page's reads are sent as it renders, so by the time the note shows they would be asked.)
  await page.locator('[data-away]', { hasText: 'host beta is offline' }).waitFor();
  const betaTask = await page.evaluate(() => location.hash.replace('#/tasks/', ''));
  assert.deepEqual(asked.filter((p) => /\/(services|changes|diff|turns)$/.test(p) && p.includes(betaTask)), [], 'nothing asked of beta while it is offline');
  assert.deepEqual(errors, [], `no console errors (${failures.join('; ')})`);
});
