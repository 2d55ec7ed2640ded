import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { attachHolder } from '../../daemon/terminal/client.ts';
import { makeTempDir } from '../helpers/git.ts';
import { attach, startHolder, TUI } from '../helpers/holder.ts';
import { within } from '../helpers/within.ts';

// A socket file left by a process killed while it listened: nobody answers on it.
async function staleSocket(file: string): Promise<void> {
  const p = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(file)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(p.stdout!, 'data');
  p.kill('SIGKILL');
  await once(p, 'exit');
  assert.ok(statSync(file).isSocket());
}

test('attachHolder rejects with the errno code when no holder answers: ENOENT, ECONNREFUSED', async (t) => {
  const dir = makeTempDir(t, 'grove-pty-');
  await assert.rejects(attachHolder(path.join(dir, 'none.sock'), null), { code: 'ENOENT' });
  const stale = path.join(dir, 'stale.sock');
  await staleSocket(stale);
  await assert.rejects(attachHolder(stale, 0), { code: 'ECONNREFUSED' });
});

test('a holder replaces a stale socket file; a link closes once however often close() is called, and says so to late listeners', async (t) => {
  const dir = makeTempDir(t, 'grove-pty-');
  const socket = path.join(dir, 'holder.sock');
  await staleSocket(socket);
  const h = await startHolder(t, [process.execPath, TUI], { cols: 80, rows: 24 }, socket);
  const a = await attach(t, h.socket, null);
  await a.sees('ready');
  let closes = 0;
  a.link.onClose(() => closes++);
  a.link.close();
  a.link.close();
  await a.until('closed', () => a.closed);
  a.link.send({ type: 'input', data: 'ignored' });
  a.link.close();
  const late = await within(1000, 'a late onClose', new Promise<Error | undefined>((r) => a.link.onClose(r)));
  assert.equal(late, undefined, 'a close asked for is no error');
  assert.equal(closes, 1);
  const b = await attach(t, h.socket, null);
  await b.sees('ready');
});
