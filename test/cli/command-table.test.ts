// The CLI's command table (daemon/cli/command-table.ts) and what a command loads: its own family,
// not the whole CLI.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { FAMILIES } from '../../daemon/cli/command-table.ts';
import { GROVE } from '../helpers/cli.ts';
import { makeHome, ROOT } from '../helpers/daemon.ts';

test('each family of commands has exactly the commands the table lists for it, and no word is in two', async () => {
  const words = FAMILIES.flatMap(([, w]) => w);
  assert.equal(new Set(words).size, words.length, 'a word is listed twice');
  for (const [load, listed] of FAMILIES) {
    const { commands } = await load();
    assert.deepEqual(Object.keys(commands).sort(), [...listed].sort());
  }
});

// The modules `grove args…` loaded, run as a user runs it (with no daemon: the command is loaded
// before its first request).
async function loaded(t: { after(fn: () => unknown): void }, args: string[]): Promise<string[]> {
  const home = makeHome(t);
  const record = path.join(home, 'loaded');
  const hook = path.join(ROOT, 'test', 'fixtures', 'record-loads.mjs');
  const code = await new Promise<number | null>((resolve) => {
    const p = spawn(process.execPath, ['--import', hook, GROVE, ...args], { env: { ...process.env, GROVE_HOME: home, GROVE_RECORD_LOADS: record }, stdio: 'ignore' });
    p.once('exit', resolve);
  });
  assert.notEqual(code, null);
  return readFileSync(record, 'utf8').trim().split('\n');
}

test('grove status and grove socket load their family alone: no TypeBox, Ajv, ws, SSH, hosts.json, MCP or other family, nor the undici inside Node', async (t) => {
  for (const args of [['status'], ['socket'], ['status', '--json']]) {
    const modules = await loaded(t, args);
    assert.ok(modules.some((m) => m.endsWith('/dist/daemon/cli/commands/status.js')), `${args.join(' ')} loads its family`);
    const needless = modules.filter((m) =>
      /node_modules\/(@sinclair\/typebox|ajv|ws)\/|\/dist\/daemon\/(client\/(ssh|hosts-file)|mcp\/|bridges\/|cli\/commands\/(?!status|plumbing))|internal\/deps\/undici/.test(m),
    );
    assert.deepEqual(needless, [], `grove ${args.join(' ')} loads what it does not need`);
  }
});
