// `grove intake add|ls|rm`: a project's watch of its repository's labelled issues (DESIGN §20),
// each issue labelled by someone who may write taken once as a task.
import type { CreateIntake, Intake, IntakeItem, IntakeSession } from '../../../schemas/intake.ts';
import { ApiProblem } from '../../client/problem.ts';
import type { Command, Ctx } from '../ctx.ts';
import { arg, oneOf, print, seconds, str } from '../ctx.ts';
import { localTime, shortId, table } from '../format.ts';
import { project, taskNames } from '../lookup.ts';
import { usage } from '../usage.ts';

const LANDS: Array<Intake['land']> = ['none', 'queue', 'pr'];
export const ITEM_COLS = ['number', 'title', 'outcome', 'actor', 'task', 'reason'];
export const WATCH_COLS = ['project', 'repository', 'label', 'state', 'last_poll', 'next_poll', 'items'];

// The last poll in a few words: when, how it went, and its error (or until when it waits).
export function pollText(last: Intake['last_poll']): string {
  if (last === null) return 'not yet';
  const why = [last.error, last.until && `until ${localTime(last.until)}`].filter(Boolean).join(', ');
  return `${localTime(last.at)} ${last.outcome}${why ? ` (${why})` : ''}`;
}

const itemRow = (i: IntakeItem, names: Map<string, string>): Record<string, unknown> => ({ ...i, number: `#${i.number}`, task: i.task_id && (names.get(i.task_id) ?? shortId(i.task_id)) });

// One watch as `intake ls PROJECT` shows it: where and what it watches, how its polls go, then its items.
function watchText(projectName: string, w: Intake, names: Map<string, string>): string {
  const s = w.session;
  return [
    `intake of project ${projectName}: ${w.repository}, label ${w.label}: ${w.state}${w.source === 'file' ? ' (from .grove.json)' : ''}`,
    `session: ${s.agent ?? "the project's agent"}, mode ${s.mode ?? 'edit'}${s.timeout_s ? `, timeout ${s.timeout_s} s` : ''}; land: ${w.land}; every ${w.interval_s} s`,
    ...(s.prompt ? [`prompt: ${s.prompt}`] : []),
    `last poll: ${pollText(w.last_poll)}`,
    `next poll: ${w.next_poll_at ? localTime(w.next_poll_at) : 'none'}`,
    '',
    'items:',
    ...table(w.items.map((i) => itemRow(i, names)), ITEM_COLS).split('\n').map((l) => `  ${l}`),
  ].join('\n');
}

// What `intake add` sends; usage errors before any request.
function definition(c: Ctx): CreateIntake {
  const label = str(c.values.label) ?? usage('missing --label: an open issue carrying it becomes a task');
  const session = { prompt: str(c.values.prompt), agent: str(c.values.agent), mode: str(c.values.mode) as IntakeSession['mode'], timeout_s: seconds(c, 'timeout') };
  return { provider: 'github', repository: str(c.values.repo), label, session, land: oneOf(c, 'land', LANDS), interval_s: seconds(c, 'every') };
}

// A project's intake, or null where it has none (the API's 404).
async function intakeOf(c: Ctx, projectId: string): Promise<Intake | null> {
  try {
    return await c.api.intake(projectId);
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 404) return null;
    throw err;
  }
}

export const commands: Record<string, Command> = {
  async 'intake add'(c) {
    const def = definition(c);
    const p = await project(c, arg(c, 0, 'project'));
    const w = await c.api.putIntake(p.id, def);
    print(c, w, () => `project ${p.name} takes the issues of ${w.repository} labelled ${w.label}: polled every ${w.interval_s} s, land ${w.land}`);
  },
  // One project's watch and its items, or every project's watch (one row each) when none is named.
  async 'intake ls'(c) {
    const key = c.positionals[0];
    if (key !== undefined) {
      const p = await project(c, key);
      const [w, names] = await Promise.all([c.api.intake(p.id), taskNames(c)]);
      return print(c, w, () => watchText(p.name, w, names));
    }
    const projects = await c.api.projects();
    const all = (await Promise.all(projects.map(async (p) => ({ p, w: await intakeOf(c, p.id) })))).filter((x): x is { p: (typeof projects)[number]; w: Intake } => x.w !== null);
    print(c, all.map((x) => x.w), () =>
      table(all.map(({ p, w }) => ({ ...w, project: p.name, last_poll: pollText(w.last_poll), next_poll: w.next_poll_at && localTime(w.next_poll_at), items: w.items.length })), WATCH_COLS),
    );
  },
  async 'intake rm'(c) {
    const p = await project(c, arg(c, 0, 'project'));
    await c.api.removeIntake(p.id);
    print(c, { removed: p.id }, () => `project ${p.name} no longer watches its issues (its tasks stay)`);
  },
};
