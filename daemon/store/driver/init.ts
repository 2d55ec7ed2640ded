import { renameSync, rmSync } from 'node:fs';
import { execa } from 'execa';
import path from 'node:path';
import { built } from '../../runtime/root.ts';
import { PGLITE_CONF } from './pglite-options.ts';

const INIT_CHILD = built('daemon/store/driver/init-child.js');

// Makes a new, empty PGlite data folder at `dir` (initdb) in a child process, atomically.
export async function initStoreDir(dir: string): Promise<void> {
  const tmp = `${dir}.init-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const res = await execa(process.execPath, ['--liftoff-only', INIT_CHILD, tmp, JSON.stringify(PGLITE_CONF)], { reject: false, stdin: 'ignore' });
  if (res.exitCode !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`initialising the store at ${dir} failed: ${res.stderr || res.stdout || `exit ${res.exitCode}`}`);
  }
  renameSync(tmp, dir);
}
