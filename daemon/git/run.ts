import { execa } from 'execa';

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

// `env` adds variables after the cleaning below (a temporary index: GIT_INDEX_FILE); `input` is
// git's stdin (a commit message), else it has none; `timeoutMs` kills a git that takes longer.
export type Git = (cwd: string, args: string[], opts?: { env?: Record<string, string>; input?: string; timeoutMs?: number }) => Promise<GitResult>;

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
export const git: Git = async (cwd, args, opts = {}) => {
  const res = await execa('git', ['-C', cwd, ...args], {
    reject: false,
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
    env: { ...gitEnv(), ...(opts.env ?? {}) },
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    extendEnv: false,
    stripFinalNewline: true,
  });
  return {
    exitCode: res.exitCode ?? (res.failed ? 128 : 0),
    stdout: String(res.stdout ?? ''),
    stderr: res.timedOut ? `git timed out after ${opts.timeoutMs} ms` : String(res.stderr ?? res.message ?? ''),
  };
};
