import type { MessagePort } from 'node:worker_threads';
export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** run elsewhere, whose runner went away meanwhile: it has ended, with an unknown outcome */
  lost?: boolean;
}

// Variables that would point git at another repository than the one we name with -C.
const REPO_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

// The daemon's environment minus anything that would redirect git away from `-C <dir>`.
export function gitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const k of REPO_ENV) delete env[k];
  return env;
}

// Runs git with an argument array (never a shell) in `cwd`; failures are data, not throws.
export async function git(cwd: string, args: string[]): Promise<GitResult> {
  // Loaded at the first call: execa takes ~30 ms to load, and the start needs no git.
  const { execa } = await import('execa');
  const res = await execa('git', ['-C', cwd, ...args], {
    reject: false,
    stdin: 'ignore',
    env: gitEnv(),
    extendEnv: false,
    stripFinalNewline: true,
  });
  return {
    exitCode: res.exitCode ?? (res.failed ? 128 : 0),
    stdout: String(res.stdout ?? ''),
    stderr: String(res.stderr ?? res.message ?? ''),
  };
}

// A git call from a worker thread, answered by the pool's relay on the main thread
// (daemon/pool.ts): `null` means "run it yourself".
export type GitRequest = { id: number; cwd: string; args: string[] };
export type GitReply = { id: number; result: GitResult | null };
export type Git = (cwd: string, args: string[]) => Promise<GitResult>;
export type GitRelay = (cwd: string, args: string[]) => Promise<GitResult | null>;

// What a command run elsewhere (the session spawner) gave, shaped as git() gives it.
export function gitResult(r: { code: number | null; stdout: string; stderr: string; error: string | null; lost?: boolean }): GitResult {
  const strip = (s: string) => s.replace(/\r?\n$/, '');
  if (r.lost) return { exitCode: 128, stdout: '', stderr: r.error ?? 'lost', lost: true };
  if (r.error !== null) return { exitCode: 128, stdout: strip(r.stdout), stderr: r.error };
  return { exitCode: r.code ?? 128, stdout: strip(r.stdout), stderr: strip(r.stderr) };
}

// git through a runner such as the session spawner, where a fork costs ~1 ms against ~10 ms
// from the daemon, whose pages (PGlite's) every fork copies; null when the runner has none.
export function relayThrough(
  run: (file: string, args: string[], opts: { env: Record<string, string> }) => Promise<Parameters<typeof gitResult>[0] | null>,
): GitRelay {
  return async (cwd, args) => {
    const r = await run('git', ['-C', cwd, ...args], { env: gitEnv() as Record<string, string> });
    return r === null ? null : gitResult(r);
  };
}

// The git of a worker thread: through `port` to the pool's relay when there is one, else here.
export function gitVia(port: MessagePort | undefined): Git {
  if (!port) return git;
  const waiting = new Map<number, (r: GitResult | null) => void>();
  let nextId = 1;
  port.on('message', (m: GitReply) => {
    waiting.get(m.id)?.(m.result);
    waiting.delete(m.id);
  });
  return async (cwd, args) => {
    const id = nextId++;
    const result = await new Promise<GitResult | null>((resolve) => {
      waiting.set(id, resolve);
      port.postMessage({ id, cwd, args } satisfies GitRequest);
    });
    return result ?? git(cwd, args);
  };
}
