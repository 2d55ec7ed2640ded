import type { PushResult } from '../../schemas/review.ts';
import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';
import { gitOut } from './snapshot.ts';

export interface PushInput {
  repo: string;
  branch: string;
  remote?: string | undefined;
}

// Nothing may wait for a person: no terminal prompt, no askpass program, ssh in batch mode.
const NO_PROMPT = { GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'false', SSH_ASKPASS: 'false', GCM_INTERACTIVE: 'never', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes' };

// A remote's name as the push route accepts one (schemas/review.ts PushBody): no leading dash, no
// control characters.
function usable(name: string): boolean {
  return name !== '' && !name.startsWith('-') && !/[\u0000-\u001f\u007f]/.test(name);
}

// POST /api/tasks/:id/push: the task's branch to a remote (the one named, else the branch's own,
// else `origin`, else the only one), with its upstream set.
export async function pushTask(input: PushInput, signal?: AbortSignal): Promise<Result<PushResult>> {
  const { repo, branch } = input;
  const remotes = await gitOut(repo, ['remote'], { signal });
  if (!remotes.ok) return remotes;
  // A name from the repository's config is held to the rule of the request's `remote`.
  const names = remotes.out.split('\n').filter(usable);
  const own = await git(repo, ['config', '--get', `branch.${branch}.remote`], { signal });
  const remote = input.remote ?? (own.exitCode === 0 ? own.stdout.trim() : names.includes('origin') ? 'origin' : names.length === 1 ? names[0] : undefined);
  if (remote === undefined || !names.includes(remote)) {
    const known = names.length > 0 ? `its remotes: ${names.join(', ')}` : 'it has none';
    return fail('NO_REMOTE', input.remote !== undefined ? `the repository has no remote ${JSON.stringify(input.remote)} (${known})` : `no remote to push to (${known})`, input.remote !== undefined ? '/remote' : undefined);
  }
  // --end-of-options: whatever the name, git takes it as a remote, never as an option of its own.
  const r = await git(repo, ['push', '--porcelain', '--set-upstream', '--end-of-options', remote, `refs/heads/${branch}:refs/heads/${branch}`], { env: NO_PROMPT, signal });
  if (r.exitCode !== 0) {
    const said = (r.stderr || r.stdout).trim().split('\n').filter((l) => l !== '' && !l.startsWith('To ')).slice(-3).join(' ');
    return fail('REMOTE_FAILED', `git push to ${remote} failed: ${said || `exit ${r.exitCode}`}`);
  }
  return { ok: true, remote, branch };
}
