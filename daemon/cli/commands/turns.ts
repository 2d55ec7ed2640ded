// `grove turns` and `restore`: the states a task's worktree was in when its agent sessions ended
// (DESIGN §17), and bringing one back.
import type { Range } from '../../client/calls.ts';
import type { Command, Ctx } from '../ctx.ts';
import { arg, print } from '../ctx.ts';
import { shortId, table } from '../format.ts';
import { task } from '../lookup.ts';
import { usage } from '../usage.ts';

// One end of a range as the API takes it: a bare number is shorthand for turn:N, as people say
// "turn 3"; anything else goes as given and the daemon checks it (400 VALIDATION_FAILED).
export function side(v: string | boolean | undefined, option: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') usage(`--${option} needs base, work, turn:N or N`);
  return /^[0-9]+$/.test(v) ? `turn:${v}` : v;
}

// --from and --to of changes and diff.
export const range = (c: Pick<Ctx, 'values'>): Range => ({ from: side(c.values.from, 'from'), to: side(c.values.to, 'to') });

// The turn's number from `turn:N` or `N`.
function turnNumber(v: string): number {
  const m = /^(?:turn:)?([1-9][0-9]{0,8})$/.exec(v);
  if (!m) usage(`<n> is a turn's number (N or turn:N), not ${v}`);
  return Number(m[1]);
}

export const commands: Record<string, Command> = {
  async turns(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const list = await c.api.turns(t.id);
    print(c, list, () =>
      table(
        list.map((x) => ({ n: x.n, session: x.session_id ? shortId(x.session_id) : x.restored ? `(saved before restoring ${x.restored})` : '(saved)', files: x.files, at: x.at })),
        ['n', 'session', 'files', 'at'],
      ),
    );
  },
  async restore(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const n = turnNumber(arg(c, 1, 'n'));
    const r = await c.api.restore(t.id, n);
    print(c, r, () =>
      [
        `restored turn ${r.restored.n} in ${t.name}'s worktree (its branch did not move)`,
        `the state before is saved as turn ${r.saved.n}; to undo: grove restore ${c.positionals[0]} ${r.saved.n}`,
      ].join('\n'),
    );
  },
};
