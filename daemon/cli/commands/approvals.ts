// `grove approvals`, `approve` and `deny`: what agents ask the person (DESIGN §15).
import type { ApprovalDecision } from '../../../schemas/approval.ts';
import type { Command, Ctx } from '../ctx.ts';
import { arg, print, str } from '../ctx.ts';
import { shortId, table } from '../format.ts';
import { pick, task } from '../lookup.ts';
import { APPROVAL_COLS, approvalRow } from '../render.ts';
import { usage } from '../usage.ts';

// `approve` and `deny`: the approval by id prefix, decided with the nonce it has now.
async function decideApproval(c: Ctx, body: Omit<ApprovalDecision, 'nonce'>): Promise<void> {
  const a = pick(await c.api.approvals(), arg(c, 0, 'id'), 'approval');
  const decided = await c.api.decide(a.id, { ...body, nonce: a.nonce } as ApprovalDecision);
  print(c, decided, () => `approval ${shortId(decided.id)} (${decided.tool}) ${decided.status}${decided.remember ? `; remembered for the ${decided.remember}` : ''}`);
}

export const commands: Record<string, Command> = {
  async approvals(c) {
    const t = str(c.values.task);
    const list = await c.api.approvals({ ...(c.values.all !== true ? { status: 'pending' } : {}), ...(t !== undefined ? { task_id: (await task(c, t)).id } : {}) });
    print(c, list, () => table(list.map(approvalRow), APPROVAL_COLS));
  },
  async approve(c) {
    const remember = c.values.remember;
    if (remember !== undefined && remember !== 'session' && remember !== 'project') usage(`--remember is session or project, not ${JSON.stringify(remember)}`);
    const answer = str(c.values.answer);
    await decideApproval(c, { decision: 'allow', ...(remember !== undefined ? { remember } : {}), ...(answer !== undefined ? { answer } : {}) });
  },
  async deny(c) {
    const message = str(c.values.message);
    await decideApproval(c, { decision: 'deny', ...(message !== undefined ? { message } : {}) });
  },
};
