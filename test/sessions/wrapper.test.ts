import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { spawnWrapped } from '../../daemon/sessions/spawn.ts';
import { sessionFiles } from '../../daemon/sessions/wrapper.ts';
import { makeTempDir } from '../helpers/git.ts';

// The wrapper holds until the daemon has stored the session (a line on its stdin). A daemon
// that dies before that closes the pipe: then nothing may run.
test('the session wrapper runs nothing when its stdin closes before the go, and the agent after it', async (t) => {
  const dir = makeTempDir(t);
  const env = { PATH: process.env.PATH ?? '' };
  const marker = path.join(dir, 'ran');
  const agent = ['sh', '-c', 'touch "$1"; cat; echo "stdin done"', 'agent', marker];

  const held = spawnWrapped({ files: sessionFiles(dir, 'held'), command: agent, cwd: dir, env });
  held.stdin!.end(); // the daemon is gone before the session was stored
  const r = await held;
  assert.equal(r.exitCode, 125);
  assert.equal(existsSync(marker), false, 'the agent never ran');
  assert.equal(existsSync(sessionFiles(dir, 'held').exit), false, 'no exit status: the session is lost, not ended');

  const files = sessionFiles(dir, 'go');
  const run = spawnWrapped({ files, command: [...agent.slice(0, 4), `${marker}-2`], cwd: dir, env });
  run.go();
  assert.equal((await run).exitCode, 0);
  assert.equal(existsSync(`${marker}-2`), true);
  // The agent's stdin is /dev/null, not the wrapper's pipe: `cat` ends at once.
  assert.equal(readFileSync(files.stdout, 'utf8'), 'stdin done\n');
  assert.equal(readFileSync(files.exit, 'utf8'), '0\n');
});
