// `grove pr <task>`: the task's pull request (DESIGN §20), opened if it has none open, and shown:
// its state and the feedback rounds grove answered.
import type { PullRequest } from '../../../schemas/pull.ts';
import { ApiProblem } from '../../client/problem.ts';
import type { Command } from '../ctx.ts';
import { arg, print, str } from '../ctx.ts';
import { localTime, shortId } from '../format.ts';
import { task } from '../lookup.ts';
import { usage } from '../usage.ts';

function prText(p: PullRequest, opened: boolean): string {
  const following = p.following ? 'followed' : p.stopped_reason ? `no longer followed: ${p.stopped_reason}` : 'not followed';
  const lines = [
    `${opened ? 'opened ' : ''}pull request #${p.number} of ${p.repository} (${p.state}, ${following}): ${p.url}`,
    `  ${p.head} into ${p.base}${p.issue_number !== null ? `, fixes #${p.issue_number}` : ''}; fix tries ${p.fix_tries_used} of ${p.fix_tries}`,
  ];
  for (const r of p.rounds) {
    const end = r.outcome === 'pending' ? 'running' : r.outcome === 'pushed' ? `pushed ${r.pushed_commit?.slice(0, 12) ?? ''}` : `failed: ${r.error ?? ''}`;
    lines.push(`  ${localTime(r.at)}  ${r.kind}${r.author ? ` (${r.author})` : ''}  session ${shortId(r.session_id)}  ${end}`);
  }
  return lines.join('\n');
}

export const commands: Record<string, Command> = {
  async pr(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const title = str(c.values.title);
    const triesText = str(c.values['fix-tries']);
    const fixTries = triesText === undefined ? undefined : Number(triesText);
    if (fixTries !== undefined && !(Number.isInteger(fixTries) && fixTries >= 0)) usage(`--fix-tries must be a whole number, not ${JSON.stringify(triesText)}`);
    let p: PullRequest;
    let opened = true;
    try {
      p = await c.api.openPr(t.id, { ...(title !== undefined ? { title } : {}), ...(fixTries !== undefined ? { fix_tries: fixTries } : {}) });
    } catch (err) {
      // One is open already: it is shown.
      if (!(err instanceof ApiProblem && err.code === 'PR_EXISTS')) throw err;
      p = await c.api.pr(t.id);
      opened = false;
    }
    print(c, p, () => prText(p, opened));
  },
};
