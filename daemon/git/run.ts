import { execa } from 'execa';

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export type Git = (cwd: string, args: string[]) => Promise<GitResult>;

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
export const git: Git = async (cwd, args) => {
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
};
