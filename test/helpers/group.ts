import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { TestContext } from 'node:test';
import { processStartTime } from '../../daemon/proc/stat.ts';

// A shell leading its own process group (as a session, a setup command or a hook runs),
// running `script`; its first stdout line is awaited. What is left of the group is killed
// after the test.
export async function shellGroup(t: TestContext, script: string) {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  const pgid = child.pid!;
  t.after(() => {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  const exited = once(child, 'exit');
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { pgid, start: processStartTime(pgid), firstLine: chunk.toString().trim(), exited };
}
