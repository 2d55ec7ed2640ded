// `grove auto add|ls|show|run|pause|resume|rm|runs`: automations (DESIGN §19), agent work started
// on a schedule, each run a task and its session.
import type { Automation, AutomationRun, CreateAutomation, Schedule } from '../../../schemas/automation.ts';
import type { Command, Ctx } from '../ctx.ts';
import { arg, err, oneOf, print, seconds, str } from '../ctx.ts';
import { EXIT } from '../errors.ts';
import { localTime, shortId, table } from '../format.ts';
import { automation, project, taskNames } from '../lookup.ts';
import { usage } from '../usage.ts';

const LANDS: Array<Automation['land']> = ['none', 'queue', 'pr'];
const OVERLAPS: Array<Automation['overlap']> = ['skip', 'queue'];
const MISSED: Array<Automation['missed']['policy']> = ['latest', 'skip'];
export const AUTO_COLS = ['id', 'name', 'schedule', 'next_run', 'last_run', 'enabled'];
export const RUN_COLS = ['id', 'status', 'why', 'scheduled_for', 'missed', 'trigger', 'task'];
// How many of its latest runs `auto show` lists (`auto runs` lists them all).
const SHOWN_RUNS = 10;

// A schedule as written: the cron with its zone, or its one time in local time.
const scheduleText = (s: Schedule) => ('at' in s ? `once at ${localTime(s.at)}` : `${s.cron}${s.timezone ? ` (${s.timezone})` : ''}`);
const nextText = (a: Automation) => (a.next_run_at ? localTime(a.next_run_at) : a.enabled ? 'none (its time has passed)' : 'none (paused)');
// A run's status, with why it was skipped or failed.
const statusText = (r: AutomationRun) => `${r.status}${r.reason ? ` (${r.reason})` : r.error ? ` (${r.error})` : ''}`;

function autoRow(a: Automation): Record<string, unknown> {
  return { ...a, id: shortId(a.id), schedule: scheduleText(a.schedule), next_run: a.next_run_at && localTime(a.next_run_at), last_run: a.last_run && statusText(a.last_run), enabled: a.enabled ? 'yes' : 'no' };
}

function runRow(r: AutomationRun, names: Map<string, string>): Record<string, unknown> {
  return { ...r, id: shortId(r.id), why: r.reason ?? r.error, scheduled_for: localTime(r.scheduled_for), task: r.task_id && (names.get(r.task_id) ?? shortId(r.task_id)) };
}

// A run in one line: its status, and the task and session it made.
function runLine(a: Automation, r: AutomationRun): string {
  const made = [r.task_id && `task ${shortId(r.task_id)}`, r.session_id && `session ${shortId(r.session_id)}`].filter(Boolean).join(', ');
  return `run ${shortId(r.id)} of ${a.name} ${statusText(r)}${made ? `: ${made}` : ''}`;
}

// What `auto add` is given besides the project and the name; usage errors before any request.
function definition(c: Ctx): Omit<CreateAutomation, 'project_id' | 'name'> {
  const [cron, at, timezone] = [str(c.values.cron), str(c.values.at), str(c.values.timezone)];
  if ((cron === undefined) === (at === undefined)) usage('give one schedule: --cron "MIN HOUR DAY MONTH WEEKDAY" or --at ISO-TIME');
  if (at !== undefined && timezone !== undefined) usage('--timezone goes with --cron: an --at time carries its own offset');
  const schedule: Schedule = at !== undefined ? { at } : { cron: cron!, ...(timezone !== undefined ? { timezone } : {}) };
  const prompt = str(c.values.prompt) ?? usage('missing --prompt: what the agent is asked at each run');
  const [taskName, base] = [str(c.values['task-name']), str(c.values.base)];
  return {
    schedule,
    session: { prompt, agent: str(c.values.agent), mode: str(c.values.mode) as CreateAutomation['session']['mode'], timeout_s: seconds(c, 'timeout') },
    task: taskName === undefined && base === undefined ? undefined : { name: taskName, base },
    precheck: str(c.values.precheck),
    land: oneOf(c, 'land', LANDS),
    overlap: oneOf(c, 'overlap', OVERLAPS),
    missed: missedOption(c),
    enabled: c.values.paused ? false : undefined,
  };
}

// --missed and --grace: left out, the daemon's default (the latest missed time within its grace runs).
function missedOption(c: Ctx): CreateAutomation['missed'] {
  const policy = oneOf(c, 'missed', MISSED);
  const grace = seconds(c, 'grace');
  if (policy === 'skip') return grace === undefined ? { policy, grace_s: 0 } : usage('--grace goes with --missed latest: --missed skip runs no missed time');
  return grace === undefined ? undefined : { policy: 'latest', grace_s: grace };
}

// The run's changes as they come, on stderr, until it ends: its events after seq `from`, read
// before it was started, so that none is lost. A change its line does not show is not printed.
async function followRun(c: Ctx, a: Automation, run: AutomationRun, from: number): Promise<AutomationRun> {
  let shown = runLine(a, run);
  err(shown);
  const { body, events } = await c.api.events(from, a.project_id !== null ? { project_id: a.project_id } : {});
  try {
    for await (const { event, data } of events) {
      if (event === 'end') break;
      if (event !== 'automation.run' || data.data?.id !== run.id) continue;
      run = data.data as AutomationRun;
      if (run.ended_at !== null) return run;
      if (runLine(a, run) !== shown) err((shown = runLine(a, run)));
    }
  } finally {
    body.destroy();
  }
  // The stream ended first (the daemon dropped it): the run as it is now.
  return (await c.api.automationRuns(a.id)).find((r) => r.id === run.id) ?? run;
}

export const commands: Record<string, Command> = {
  async 'auto add'(c) {
    const name = arg(c, 1, 'name');
    const def = definition(c);
    const p = await project(c, arg(c, 0, 'project'));
    const a = await c.api.createAutomation({ project_id: p.id, name, ...def });
    print(c, a, () => `automation ${a.name} (${a.id}) of project ${p.name}: ${scheduleText(a.schedule)}, next run ${nextText(a)}`);
  },
  // One project's automations, or every project's (with a PROJECT column) when none is named.
  async 'auto ls'(c) {
    const key = c.positionals[0];
    const p = key === undefined ? null : await project(c, key);
    const list = await c.api.automations(p ? { project_id: p.id } : {});
    if (p) return print(c, list, () => table(list.map(autoRow), AUTO_COLS));
    const names = new Map((await c.api.projects()).map((x) => [x.id, x.name]));
    const whose = (a: Automation) => (a.project_id === null ? (a.repository ?? '') : (names.get(a.project_id) ?? shortId(a.project_id)));
    print(c, list, () => table(list.map((a) => ({ project: whose(a), ...autoRow(a) })), ['project', ...AUTO_COLS]));
  },
  async 'auto show'(c) {
    const a = await automation(c, arg(c, 0, 'automation'));
    const [runs, owner, names] = await Promise.all([
      c.api.automationRuns(a.id),
      a.project_id === null ? Promise.resolve(`repository ${a.repository}`) : c.api.project(a.project_id).then((p) => `project ${p.name}`),
      taskNames(c),
    ]);
    const last = runs.slice(0, SHOWN_RUNS);
    const s = a.session;
    print(c, { ...a, runs: last }, () =>
      [
        `automation ${a.name} (${a.id}) of ${owner}: ${a.enabled ? 'enabled' : 'paused'}`,
        `schedule: ${scheduleText(a.schedule)}; next run ${nextText(a)}`,
        `session: ${s.agent ?? "the project's agent"}${s.mode ? `, mode ${s.mode}` : ''}${s.timeout_s ? `, timeout ${s.timeout_s} s` : ''}`,
        `prompt: ${s.prompt}`,
        ...(a.task.name || a.task.base ? [`task: ${a.task.name ?? `${a.name} {date}`}${a.task.base ? ` on ${a.task.base}` : ''}`] : []),
        ...(a.precheck ? [`precheck: ${a.precheck}`] : []),
        `land: ${a.land}; overlap: ${a.overlap}; missed: ${a.missed.policy}${a.missed.policy === 'latest' ? ` within ${a.missed.grace_s} s` : ''}`,
        '',
        runs.length > SHOWN_RUNS ? `the last ${SHOWN_RUNS} runs of ${runs.length} (grove auto runs lists them all):` : 'runs:',
        ...table(last.map((r) => runRow(r, names)), RUN_COLS).split('\n').map((l) => `  ${l}`),
      ].join('\n'),
    );
  },
  // A run now, paused or not; with --follow, its changes on stderr and its end (exit 1 if it failed).
  async 'auto run'(c) {
    const a = await automation(c, arg(c, 0, 'automation'));
    const from = c.values.follow ? (await c.api.health()).last_event_seq : 0;
    let run = await c.api.runAutomation(a.id);
    if (c.values.follow && run.ended_at === null) run = await followRun(c, a, run, from);
    print(c, run, () => runLine(a, run));
    if (run.status === 'failed') process.exitCode = EXIT.API;
  },
  async 'auto pause'(c) {
    const a = await c.api.updateAutomation((await automation(c, arg(c, 0, 'automation'))).id, { enabled: false });
    print(c, a, () => `automation ${a.name} is paused`);
  },
  async 'auto resume'(c) {
    const a = await c.api.updateAutomation((await automation(c, arg(c, 0, 'automation'))).id, { enabled: true });
    print(c, a, () => `automation ${a.name} is resumed: next run ${nextText(a)}`);
  },
  async 'auto rm'(c) {
    const a = await automation(c, arg(c, 0, 'automation'));
    await c.api.removeAutomation(a.id);
    print(c, { removed: a.id }, () => `removed automation ${a.name} and its runs (their tasks stay)`);
  },
  async 'auto runs'(c) {
    const a = await automation(c, arg(c, 0, 'automation'));
    const [runs, names] = await Promise.all([c.api.automationRuns(a.id), taskNames(c)]);
    print(c, runs, () => table(runs.map((r) => runRow(r, names)), RUN_COLS));
  },
};
