// The dashboard's host switcher (DESIGN §14.1) in Chromium: a local daemon with a saved host that
// is a second daemon behind a real sshd, reached only through the local daemon's forward.
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parseSshUrl } from '../../daemon/client/hosts-file.ts';
import { closeMaster, type ForwardOptions } from '../../daemon/client/ssh.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { openPage, sharedBrowser } from '../helpers/browser.ts';
import { agentHome, gate } from '../helpers/sessions.ts';
import { freePort, startSshd, tapSocket } from '../helpers/sshd.ts';

const browser = sharedBrowser();
const GROVE = JSON.stringify({ agent: 'fixture' });

test('the host switcher: a saved host shown live through this daemon, kept on reload, through an outage, and back to this machine', async (t) => {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-sw-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let remote: TestDaemon = await startDaemon(t, { home: agentHome(t) });
  const ports = [remote.port];
  // Every byte that reaches the remote daemon's socket comes through here (the SSH forward's end).
  const tapPath = path.join(dir, 'tap.sock');
  const tap = await tapSocket(t, tapPath, () => remote.socketPath);
  const sshd = await startSshd(t);
  const runtime = path.join(dir, 'run');
  const local = await startDaemon(t, { env: { GROVE_SSH_CONFIG: sshd.clientConfig, XDG_RUNTIME_DIR: runtime } });
  const hosts = { box: sshd.url(tapPath), gone: `ssh://nobody@127.0.0.1:${await freePort()}?socket=/nowhere.sock` };
  writeFileSync(path.join(local.home, 'hosts.json'), JSON.stringify({ hosts: Object.entries(hosts).map(([name, url]) => ({ name, url })) }), { mode: 0o600 });
  const ssh: ForwardOptions = { runtimeDir: path.join(runtime, 'grove', 'ssh'), env: { ...process.env, GROVE_SSH_CONFIG: sshd.clientConfig } };
  // Runs first of the cleanups: the master the local daemon left open.
  t.after(() => closeMaster(parseSshUrl(hosts.box), ssh));

  const here = (await local.socket('POST', '/api/projects', { body: { path: makeRepo(t, { files: { '.grove.json': GROVE } }), name: 'near-project' } })).json;
  await local.socket('POST', '/api/tasks', { body: { project_id: here.id, name: 'near task' } });
  const farRepo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture', ports: [3000] }) } });
  const far = (await remote.socket('POST', '/api/projects', { body: { path: farRepo, name: 'far-project' } })).json;
  const farTask = (await remote.socket('POST', '/api/tasks', { body: { project_id: far.id, name: 'far task' } })).json;
  assert.equal(farTask.status, 'ready', JSON.stringify(farTask));

  const { page, errors, failures } = await openPage(t, await browser());
  const origin = `http://127.0.0.1:${local.port}`;
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(`${origin}/`);
  const projects = page.locator('nav.sidebar > ul');
  await projects.getByRole('link', { name: 'near-project' }).waitFor();

  // This machine, then each saved host: `gone` greyed, with what its forward answers (ssh's message).
  const switcher = page.getByRole('navigation', { name: 'Hosts' });
  await switcher.getByRole('link', { name: 'box' }).waitFor();
  assert.equal(await switcher.getByRole('link', { name: 'This machine' }).getAttribute('aria-current'), 'page');
  const gone = switcher.locator('.unreachable[data-host="gone"]');
  await gone.locator('.reason', { hasText: /^gone: .*(Connection refused|connect to host).*\(HOST_UNREACHABLE\)$/ }).waitFor();
  assert.equal(await gone.getAttribute('aria-disabled'), 'true');
  assert.equal(await switcher.getByRole('link', { name: /gone/ }).count(), 0, 'an unreachable host is not a link');

  // The saved host: its project and task, none of this machine's.
  await switcher.getByRole('link', { name: 'box' }).click();
  await page.waitForURL(`${origin}/?host=box#/`);
  await projects.getByRole('link', { name: 'far-project' }).waitFor();
  await page.locator('.card[data-task="far task"]').waitFor();
  assert.equal(await projects.getByRole('link', { name: 'near-project' }).count(), 0);
  assert.equal(await page.locator('.card[data-task="near task"]').count(), 0);
  assert.equal(await switcher.getByRole('link', { name: 'box' }).getAttribute('aria-current'), 'page');
  await page.locator('.card[data-task="far task"]').click();
  await page.getByRole('heading', { name: 'far task' }).waitFor();
  // Its port is on the remote's loopback: named, not linked to this machine's.
  const port = Object.values(farTask.ports)[0];
  await page.locator('.facts .port', { hasText: `http://127.0.0.1:${port} on box` }).waitFor();
  assert.equal(await page.locator('a.port').count(), 0);

  // A session started on the remote by its own API appears live, its output while it runs.
  const held = gate(t);
  const started = await remote.socket('POST', `/api/tasks/${farTask.id}/sessions`, { body: { prompt: 'echo:after', args: ['echo:before', `wait:${held.path}`] } });
  assert.equal(started.status, 201, started.text);
  const turn = page.locator('.turn').first();
  await turn.locator('.raw .row', { hasText: 'before' }).waitFor();
  await turn.locator('.status.running').waitFor();
  assert.equal(await turn.locator('.output').getAttribute('data-ended'), 'false');
  held.release();
  await turn.locator('.raw .row', { hasText: 'after' }).waitFor();
  await turn.locator('.output[data-ended="true"]').waitFor();
  await turn.locator('.status.exited').waitFor();

  // A reload stays on the host, on the same page.
  await page.reload();
  assert.equal(page.url(), `${origin}/?host=box#/tasks/${farTask.id}`);
  await page.getByRole('heading', { name: 'far task' }).waitFor();
  await page.locator('.turn .raw .row', { hasText: 'after' }).waitFor();
  // Before the outage the only failures are the unreachable host's, asked for its reason.
  assert.deepEqual([...failures].filter((f) => !f.startsWith('502 GET /api/hosts/gone/api/health ')), [], 'no other request failed');
  assert.deepEqual([...errors].filter((e) => !e.includes('status of 502')), [], 'no error in the page');

  // The host's daemon goes away while a session of it runs: the page stays, saying it
  // reconnects, and is live again when the daemon is back, the session's output included.
  const held2 = gate(t);
  const second = await remote.socket('POST', `/api/tasks/${farTask.id}/sessions`, { body: { prompt: 'echo:second after', args: ['echo:second before', `wait:${held2.path}`] } });
  assert.equal(second.status, 201, second.text);
  const turn2 = page.locator('.turn', { has: page.locator('.raw .row', { hasText: 'second before' }) });
  await turn2.locator('.output[data-ended="false"]').waitFor();
  await remote.stop();
  const notice = page.locator('main .notice[role="status"]');
  // Past the browser's own reconnection: the forward refuses the stream, and the page says why.
  await notice.filter({ hasText: /^Reconnecting to box… box: its daemon did not answer over the SSH forward .*\(HOST_UNREACHABLE\)$/ }).waitFor({ timeout: 30_000 });
  assert.ok(await page.getByRole('heading', { name: 'far task' }).isVisible(), 'what was shown stays');
  assert.ok(await turn2.locator('.raw .row', { hasText: 'second before' }).isVisible());
  remote = await startDaemon(t, { home: remote.home });
  ports.push(remote.port);
  await notice.waitFor({ state: 'detached', timeout: 30_000 });
  held2.release();
  await turn2.locator('.raw .row', { hasText: 'second after' }).waitFor({ timeout: 30_000 });
  await turn2.locator('.output[data-ended="true"]').waitFor({ timeout: 30_000 });
  assert.equal(await turn2.locator('.raw .row').count(), 2, 'each line once');
  await projects.getByRole('link', { name: 'far-project' }).click();
  await page.locator('.card[data-task="far task"]').waitFor();
  const later = await remote.socket('POST', '/api/tasks', { body: { project_id: far.id, name: 'after the outage' } });
  assert.equal(later.status, 201, later.text);
  await page.locator('.card[data-task="after the outage"]').waitFor();
  assert.equal(page.url(), `${origin}/?host=box#/projects/${far.id}`, 'the same page, not loaded again');

  // Back to this machine: its project only.
  await switcher.getByRole('link', { name: 'This machine' }).click();
  await page.waitForURL(`${origin}/#/`);
  await projects.getByRole('link', { name: 'near-project' }).waitFor();
  await page.locator('.card[data-task="near task"]').waitFor();
  assert.equal(await projects.getByRole('link', { name: 'far-project' }).count(), 0);
  assert.equal(await page.locator('.card[data-task="far task"]').count(), 0);

  // Nothing in the page went anywhere but this daemon; what reached the remote came over SSH.
  const elsewhere = requested.filter((u) => new URL(u).origin !== origin);
  assert.deepEqual(elsewhere, [], 'every request of the page went to the local daemon');
  assert.ok(!requested.some((u) => ports.some((p) => new URL(u).port === String(p))), "the remote's TCP front was not used");
  assert.match(tap.reached(), /GET \/api\/events\?after=\d+ HTTP\/1\.1/, "the page's event stream reached the remote through the forward");
  assert.match(tap.reached(), /user-agent: [^\r\n]*HeadlessChrome/i, "the page's own requests reached the remote through the forward");
});

