import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { Client, request } from 'undici';
import { makeHome, ROOT } from './helpers/daemon.ts';
import { seedStore } from './helpers/template.ts';

// Every file under node_modules/.cache with its size and mtime (empty when there is none).
function cacheListing(): string[] {
  const dir = path.join(ROOT, 'node_modules', '.cache');
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((f) => {
      const st = statSync(path.join(dir, f));
      return `${f} ${st.size} ${st.mtimeMs}`;
    })
    .sort();
}

// Whether something (the user's own grove, say) already listens on 127.0.0.1:`port`.
async function taken(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

// The README's quick start: `npm start` with no settings serves on the socket and 127.0.0.1:7433.
// Where 7433 is taken (the user's own grove service runs), the default is still what it tries:
// it then exits 1 naming the port, and nothing else of the test can run.
test('npm start serves GET /api/health on the socket and on 127.0.0.1:7433', async (t) => {
  const busy = await taken(7433);
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  const env: NodeJS.ProcessEnv = { ...process.env, GROVE_HOME: home };
  delete env.GROVE_PORT;
  const cacheBefore = cacheListing();
  const proc = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<number | string>((r) => proc.once('exit', (c, s) => r(c ?? s ?? -1)));
  t.after(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      process.kill(-proc.pid!, 'SIGTERM');
      await exited;
    }
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  if (busy) {
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    assert.equal(await exited, 1, 'port 7433 is taken: the daemon cannot start');
    assert.match(out + stderr, /EADDRINUSE[^\n]*127\.0\.0\.1:7433/, 'it names the default port it tried');
    return;
  }
  const ready = await new Promise<any>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.includes('grove daemon ready')) resolve(JSON.parse(line));
    });
    void exited.then((c) => reject(new Error(`npm start exited ${c}: ${stderr}`)));
  });
  assert.equal(ready.port, 7433);
  assert.equal(ready.socket, path.join(home, 'grove.sock'));
  // Built once at install: a start compiles, bundles and caches nothing.
  assert.deepEqual(cacheListing(), cacheBefore, 'nothing written under node_modules/.cache at start');

  const tcp = await request('http://127.0.0.1:7433/api/health');
  const viaTcp = (await tcp.body.json()) as any;
  const client = new Client('http://localhost', { socketPath: ready.socket });
  t.after(() => client.close());
  const sock = await client.request({ path: '/api/health', method: 'GET' });
  const viaSocket = (await sock.body.json()) as any;
  assert.equal(tcp.statusCode, 200);
  assert.equal(sock.statusCode, 200);
  assert.equal(viaTcp.status, 'ok');
  assert.deepEqual(viaTcp, viaSocket, 'both listeners reach the same daemon');
});
