import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { addProject, startDaemon, type TestDaemon } from './daemon.ts';
import { makeRepo, makeTempDir } from './git.ts';

// A real agent CLI installed from npm into a temporary folder (never a dependency of grove): the
// folder of its commands, to put first on the daemon's PATH.
export function installCli(t: TestContext, pkg: string): string {
  const prefix = makeTempDir(t, 'grove-cli-');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, pkg], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
  return path.join(prefix, 'node_modules', '.bin');
}

// A daemon started with `env`, with a project of its own and one ready task in it.
export async function daemonWithTask(t: TestContext, env: Record<string, string | undefined>): Promise<{ d: TestDaemon; task: any }> {
  const d = await startDaemon(t, { env });
  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'agent work' } })).json;
  if (task.status !== 'ready') throw new Error(`task is ${task.status}`);
  return { d, task };
}

// A local TCP port that nothing listens on (taken from the OS, then released): an agent's model
// endpoint there is refused at once, so a real CLI runs offline up to its first model call.
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
