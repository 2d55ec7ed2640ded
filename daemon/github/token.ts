// The GitHub token (DESIGN §20): GH_TOKEN or GITHUB_TOKEN, else what `github.token_command` prints
// (`gh auth token` when gh is installed). Read when a request needs it and kept in memory only,
// for a minute, so that a poll does not spawn gh per request and a changed token is soon seen.
// It is never written to the store, a log, an event, an error or an agent's environment.
import { execa } from 'execa';
import { which } from '../runtime/which.ts';

const KEEP_MS = 60_000;
const COMMAND_TIMEOUT_MS = 10_000;

export type TokenRead = { token: string } | { token: null; why: string };

export interface TokenSourceOptions {
  env?: Record<string, string | undefined>;
  /** github.token_command; undefined: `gh auth token` when gh is on PATH */
  command?: string[] | undefined;
  now?: () => number;
}

export function createTokenSource(opts: TokenSourceOptions = {}) {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  let kept: { token: string; at: number } | null = null;

  async function fromCommand(): Promise<TokenRead> {
    const command = opts.command ?? (which('gh', env.PATH ?? '') !== null ? ['gh', 'auth', 'token'] : null);
    if (command === null) return { token: null, why: 'no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or github.token_command in the config (or install gh and run gh auth login)' };
    const res = await execa(command[0]!, command.slice(1), { reject: false, stdin: 'ignore', timeout: COMMAND_TIMEOUT_MS, env: env as NodeJS.ProcessEnv, extendEnv: false });
    // Neither its output nor its arguments are repeated in the reason: either may hold the token.
    const name = command[0]!;
    if (res.failed) return { token: null, why: `github.token_command (${name}) failed${res.timedOut ? ': it did not end in time' : res.exitCode !== undefined ? ` with exit code ${res.exitCode}` : ''}` };
    const token = res.stdout.trim();
    if (token === '' || /\s/.test(token)) return { token: null, why: `github.token_command (${name}) printed no token` };
    return { token };
  }

  return {
    async read(): Promise<TokenRead> {
      const fromEnv = env.GH_TOKEN?.trim() || env.GITHUB_TOKEN?.trim();
      if (fromEnv) return { token: fromEnv };
      if (kept !== null && now() - kept.at < KEEP_MS) return { token: kept.token };
      const read = await fromCommand();
      kept = read.token === null ? null : { token: read.token, at: now() };
      return read;
    },
    /** GitHub refused the token: the next read runs the command again */
    forget(): void {
      kept = null;
    },
  };
}

export type TokenSource = ReturnType<typeof createTokenSource>;
