import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import test from 'node:test';
import { prepareSocketPath, SocketInUseError } from '../../daemon/http/unix-socket.ts';
import { makeTempDir } from '../helpers/git.ts';

test('socket path: its folder is made private; a live socket is another daemon, a stale one is cleared', async (t) => {
  const dir = path.join(makeTempDir(t), 'run', 'grove');
  const socketPath = path.join(dir, 'grove.sock');
  await prepareSocketPath(socketPath);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(existsSync(socketPath), false);

  const live = createServer().listen(socketPath);
  await once(live, 'listening');
  await assert.rejects(prepareSocketPath(socketPath), (err: unknown) => {
    assert.ok(err instanceof SocketInUseError);
    assert.equal(err.message, `another grove daemon is already listening on ${socketPath}`);
    return true;
  });
  await new Promise((resolve) => live.close(resolve));

  // A daemon killed with SIGKILL leaves its socket file behind, with nobody listening.
  const killed = spawn(process.execPath, ['-e', "require('net').createServer().listen(process.argv[1], () => console.log('up'))", socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => killed.kill('SIGKILL'));
  await once(killed.stdout!, 'data');
  killed.kill('SIGKILL');
  await once(killed, 'exit');
  assert.ok(lstatSync(socketPath).isSocket(), 'the stale socket is there');
  await prepareSocketPath(socketPath);
  assert.equal(existsSync(socketPath), false, 'cleared');
});

test('socket path: a file that is not a socket is never replaced; a path too long for sun_path is refused', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'grove.sock');
  writeFileSync(file, 'mine');
  await assert.rejects(prepareSocketPath(file), { message: `${file} exists and is not a socket; refusing to replace it` });
  assert.equal(existsSync(file), true);
  const long = path.join(dir, 'x'.repeat(120), 'grove.sock');
  await assert.rejects(prepareSocketPath(long), /is longer than 10[37] bytes; set GROVE_SOCKET to a shorter path/);
  assert.equal(existsSync(path.dirname(long)), false, 'nothing made');
});
