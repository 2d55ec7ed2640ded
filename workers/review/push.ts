import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';
import { gitOut } from './snapshot.ts';

// A push that has not finished by then is stopped: a remote that hangs must not hold the pool.
const PUSH_TIMEOUT_MS = 120_000;

export interface PushInput {
  repo: string;
  branch: string;
  remote?: string | undefined;
}

// Nothing may wait for a person: no terminal prompt, no askpass program, ssh in batch mode.
const NO_PROMPT = { GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'false', SSH_ASKPASS: 'false', GCM_INTERACTIVE: 'never', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes' };

// POST /api/tasks/:id/push: the task's branch to a remote (the one named, else the branch's own,
// else `origin`, else the only one), with its upstream set.
export async function pushTask(input: PushInput): Promise<Result<{ remote: string; branch: string }>> {
  const { repo, branch } = input;
  const remotes = await gitOut(repo, ['remote']);
  if (!remotes.ok) return remotes;
  const names = remotes.out.split('\n').filter(Boolean);
  const own = await git(repo, ['config', '--get', `branch.${branch}.remote`]);
  const remote = input.remote ?? (own.exitCode === 0 ? own.stdout.trim() : names.includes('origin') ? 'origin' : names.length === 1 ? names[0] : undefined);
  if (remote === undefined || !names.includes(remote)) {
    const known = names.length > 0 ? `its remotes: ${names.join(', ')}` : 'it has none';
    return fail('NO_REMOTE', input.remote !== undefined ? `the repository has no remote ${JSON.stringify(input.remote)} (${known})` : `no remote to push to (${known})`, input.remote !== undefined ? '/remote' : undefined);
  }
  const r = await git(repo, ['push', '--porcelain', '--set-upstream', remote, `refs/heads/${branch}:refs/heads/${branch}`], { env: NO_PROMPT, signal: AbortSignal.timeout(PUSH_TIMEOUT_MS) });
  if (r.exitCode !== 0) {
    const said = (r.stderr || r.stdout).trim().split('\n').filter((l) => l !== '' && !l.startsWith('To ')).slice(-3).join(' ');
    return fail('REMOTE_FAILED', `git push to ${remote} failed: ${said || `exit ${r.exitCode}`}`);
  }
  return { ok: true, remote, branch };
}
