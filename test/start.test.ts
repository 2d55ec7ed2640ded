import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { Client, request } from 'undici';
import { makeHome, ROOT } from './helpers/daemon.ts';
import { seedStore } from './helpers/template.ts';

// The README's quick start: `npm start` with no settings serves on the socket and 127.0.0.1:7433.
test('npm start serves GET /api/health on the socket and on 127.0.0.1:7433', async (t) => {
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  const env: NodeJS.ProcessEnv = { ...process.env, GROVE_HOME: home };
  delete env.GROVE_PORT;
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
  const ready = await new Promise<any>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.includes('grove daemon ready')) resolve(JSON.parse(line));
    });
    void exited.then((c) => reject(new Error(`npm start exited ${c}: ${stderr}`)));
  });
  assert.equal(ready.port, 7433);
  assert.equal(ready.socket, path.join(home, 'grove.sock'));
  // Its bundle folder carries its pid, so that a start of other sources does not remove it.
  const cache = path.join(ROOT, 'node_modules', '.cache', 'grove');
  const marked = readdirSync(cache).filter((f) => f.startsWith('daemon-') && existsSync(path.join(cache, f, `in-use.${ready.pid}`)));
  assert.equal(marked.length, 1, `one bundle folder marked with pid ${ready.pid}`);

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
