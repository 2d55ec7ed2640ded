/// <reference lib="dom" />
// `npm run screenshots`: docs/screenshots/*.png, the dashboard as the README shows it. A real
// daemon in a temporary home, real repositories, the test fixtures as agents (named for what they
// are), Debian's Chromium at 1280×800; everything it started is stopped and removed at the end.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { request } from 'undici';
import { call, ROOT, startBenchDaemon } from '../bench/daemon.ts';
import { parseSshUrl } from '../daemon/client/hosts-file.ts';
import { closeMaster } from '../daemon/client/ssh.ts';
import { CHROMIUM, CHROMIUM_ARGS, KEEP_NAMES } from '../test/helpers/browser.ts';
import { makeRepo } from '../test/helpers/git.ts';
import { freePort, startSshd } from '../test/helpers/sshd.ts';

const OUT = path.join(ROOT, 'docs', 'screenshots');
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');

const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-shots-')));

// Repositories under `root`, removed with it.
const repo = (files: Record<string, string>) => makeRepo({ after: () => {} }, { files, parent: root });

const home = path.join(root, 'home');
mkdirSync(home);
const agent = (extra: string[] = []) => ({ command: [STREAM, ...extra, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], format: 'claude' });
writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: { 'demo-agent': agent() } }));
// A second machine for the host switcher (DESIGN §14.1): another daemon behind a real sshd on
// loopback, saved as a host beside one that cannot be reached.
const cleanups: Array<() => unknown> = [];
const sshd = await startSshd({ after: (fn) => cleanups.push(fn) });
const remoteHome = path.join(root, 'remote');
mkdirSync(remoteHome);
writeFileSync(path.join(remoteHome, 'config.json'), JSON.stringify({ agents: { 'demo-agent': agent() } }));
const remote = await startBenchDaemon({ template: null, home: remoteHome });
const box = sshd.url(remote.socketPath);
writeFileSync(path.join(home, 'hosts.json'), JSON.stringify({ hosts: [{ name: 'build-box', url: box }, { name: 'old-laptop', url: `ssh://me@127.0.0.1:${await freePort()}` }] }), { mode: 0o600 });
const ssh = { runtimeDir: path.join(root, 'run', 'grove', 'ssh'), env: { ...process.env, GROVE_SSH_CONFIG: sshd.clientConfig } };
const d = await startBenchDaemon({ template: null, home, port: true, env: { GROVE_SSH_CONFIG: sshd.clientConfig, XDG_RUNTIME_DIR: path.join(root, 'run') } });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
const gate = path.join(root, 'gate');
execFileSync('mkfifo', [gate]);
const running: string[] = [];
const farRunning: string[] = [];
try {
  const shop = await call(d.api, 'POST', '/api/projects', {
    name: 'webshop',
    path: repo({
      '.grove.json': JSON.stringify({ agent: 'demo-agent', setup: ['echo installing dependencies', 'echo 214 packages installed'], ports: [3000], services: { web: { command: 'exec node scripts/dev-server.mjs' } } }),
      'scripts/dev-server.mjs': readFileSync(WEB, 'utf8'),
      'src/cart.js': 'export const total = (items) => items.reduce((s, i) => s + i.price, 0);\n',
      'README.md': '# webshop\n',
    }),
  });
  const api = await call(d.api, 'POST', '/api/projects', {
    name: 'billing-api',
    path: repo({ '.grove.json': JSON.stringify({ agent: 'demo-agent', setup: ['test -f .env || { echo ".env is missing: copy .env.example" >&2; exit 1; }'] }), 'README.md': '# billing\n' }),
  });
  const task = (project: string, name: string) => call(d.api, 'POST', '/api/tasks', { project_id: project, name });
  // Until the session's end: its output stream ends then.
  const ended = async (id: string) => {
    const res = await request(`http://localhost/api/sessions/${id}/output`, { dispatcher: d.api, headers: { accept: 'text/event-stream' } });
    await res.body.text();
  };
  const session = async (taskId: string, prompt: string) => call(d.api, 'POST', `/api/tasks/${taskId}/sessions`, { prompt });

  const refactor = await task(shop.id, 'refactor cart totals');
  await ended((await session(refactor.id, 'write:src/cart.js=export const total = (items) => items.reduce((s, i) => s + i.price * i.qty, 0);')).id);
  await call(d.api, 'POST', `/api/tasks/${refactor.id}/commit`, { message: 'cart: totals count quantities' });
  await call(d.api, 'POST', `/api/tasks/${refactor.id}/merge`, {});
  await call(d.api, 'DELETE', `/api/tasks/${refactor.id}`);

  const checkout = await task(shop.id, 'checkout page');
  const first = await session(checkout.id, 'write:src/checkout.html=<form id="checkout"><button>Pay</button></form>');
  await ended(first.id);
  const followUp = await call(d.api, 'POST', `/api/sessions/${first.id}/messages`, { prompt: 'write:src/checkout.css=#checkout { display: grid; gap: 8px; }' });
  await ended(followUp.id);
  running.push((await call(d.api, 'POST', `/api/tasks/${checkout.id}/services/web`)).id);

  const search = await task(shop.id, 'search suggestions');
  running.push((await session(search.id, `wait:${gate}`)).id);
  const sdk = await task(shop.id, 'upgrade payment SDK');
  await ended((await session(sdk.id, 'limit:7200')).id);
  await task(api.id, 'invoice PDFs');

  const pipeline = await call(remote.api, 'POST', '/api/projects', { name: 'ml-pipeline', path: repo({ '.grove.json': JSON.stringify({ agent: 'demo-agent' }), 'README.md': '# pipeline\n' }) });
  const retrain = await call(remote.api, 'POST', '/api/tasks', { project_id: pipeline.id, name: 'retrain nightly' });
  await call(remote.api, 'POST', '/api/tasks', { project_id: pipeline.id, name: 'faster feature store' });
  farRunning.push((await call(remote.api, 'POST', `/api/tasks/${retrain.id}/sessions`, { prompt: `wait:${gate}` })).id);

  mkdirSync(OUT, { recursive: true });
  // The task page whole, from its head to its diff.
  for (const [file, url, scheme, fullPage] of [
    ['board.png', '/#/', 'light', false],
    ['task.png', `/#/tasks/${checkout.id}`, 'light', true],
    ['board-dark.png', '/#/', 'dark', false],
    ['hosts.png', '/?host=build-box#/', 'light', false],
  ] as const) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme });
    await context.addInitScript(KEEP_NAMES);
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${d.port}${url}`);
    if (url === '/#/') await page.locator('.card .badge.limit').waitFor();
    else if (file === 'hosts.png') {
      await page.locator('.card[data-task="retrain nightly"]').waitFor();
      await page.locator('.hosts .unreachable .reason', { hasText: 'HOST_UNREACHABLE' }).waitFor();
    } else await page.locator('.diff tr.add').first().waitFor();
    await page.locator('.hosts').waitFor();
    await page.screenshot({ path: path.join(OUT, file), fullPage });
    await context.close();
    console.log(`docs/screenshots/${file}`);
  }
} finally {
  // Sessions outlive a daemon that stops: these are killed first.
  for (const id of running) await call(d.api, 'DELETE', `/api/sessions/${id}`);
  for (const id of farRunning) await call(remote.api, 'DELETE', `/api/sessions/${id}`);
  await browser.close();
  await d.stop();
  await closeMaster(parseSshUrl(box), ssh);
  await remote.stop();
  for (const fn of cleanups.reverse()) await fn();
  rmSync(root, { recursive: true, force: true });
}
