// `grove task new|ls|show|rm`.
import path from 'node:path';
import type { CreateTaskBody } from '../../../schemas/task.ts';
import type { Command } from '../ctx.ts';
import { arg, err, print, str } from '../ctx.ts';
import { EXIT } from '../errors.ts';
import { table } from '../format.ts';
import { followSetup } from '../follow.ts';
import { project, task, withHost } from '../lookup.ts';
import { SERVICE_COLS, serviceRow, short, TASK_COLS } from '../render.ts';
import { usage } from '../usage.ts';


export const commands: Record<string, Command> = {
  async 'task new'(c) {
    const { repository, host } = c.values;
    if (repository === '') usage('--repository needs the URL of a repository');
    const issue = str(c.values.issue);
    if (c.values.issue === '' || c.values.issue === true) usage("--issue needs the URL of an issue's page");
    // With --repository the daemon picks the host (DESIGN §14.2 placement); else the project is named.
    // From an issue (DESIGN §20) the name is optional: the issue's number and title.
    const at = typeof repository === 'string' ? 0 : 1;
    const name = issue === undefined ? arg(c, at, 'name') : c.positionals[at]; // usage errors before any request
    const p = typeof repository === 'string' ? null : await project(c, arg(c, 0, 'project'), str(host));
    const body: CreateTaskBody = p ? { project_id: p.id, name } : { repository: repository as string, name, ...(typeof host === 'string' ? { host } : {}) };
    if (issue !== undefined) body.issue_url = issue;
    if (typeof c.values.base === 'string') body.base = c.values.base;
    if (typeof c.values.branch === 'string') body.branch = c.values.branch;
    // Its first session (DESIGN §17), waiting for the tasks of --after to merge. From an issue it
    // always has one: the issue is its prompt, --prompt the instructions around it.
    const after = str(c.values.after);
    if (after !== undefined && typeof c.values.prompt !== 'string' && issue === undefined) usage('--after needs --prompt: the session that waits for those tasks');
    if (typeof c.values.prompt === 'string' || issue !== undefined) {
      body.session = { prompt: str(c.values.prompt) };
      if (typeof c.values.agent === 'string') body.session.agent = c.values.agent;
      if (typeof c.values.mode === 'string') body.session.mode = c.values.mode as NonNullable<CreateTaskBody['session']>['mode'];
      if (after !== undefined) body.after = after.split(',').map((x) => x.trim()).filter(Boolean);
    }
    // Progress (the setup's commands and output as they run) on a terminal, or when asked.
    const progress = !c.values['no-wait'] && !c.json && (process.stderr.isTTY || c.values.progress === true);
    if (c.values['no-wait'] || progress) body.wait = false;
    let t = await c.api.createTask(body);
    // Placed by the daemon: the project is the one on the host it chose.
    const where = p ?? (await c.api.project(t.project_id));
    const team = await c.team();
    const on = team.shared ? ` on host ${team.nameOf(t.host_id)}` : '';
    if (progress) {
      err(`task ${t.name}${on}: branch ${t.branch}, worktree ${path.join(where.path, t.worktree_path)}`);
      t = await followSetup(c, t.id, err);
    }
    const first = t.session ? `\nsession ${t.session.id} (${t.session.agent}) ${t.session.status}${body.after ? ` until ${body.after.join(', ')} merged` : ''}` : '';
    print(c, t, () => `task ${t.name} (${t.id}) is ${t.status}${on}: branch ${t.branch}, worktree ${path.join(where.path, t.worktree_path)}${first}`);
    if (t.status === 'setup_failed') process.exitCode = EXIT.API;
  },
  async 'task ls'(c) {
    const key = c.positionals[0];
    const list = await c.api.tasks(key ? { project_id: (await project(c, key)).id } : {});
    const [rows, columns] = await withHost(c, short(list), TASK_COLS);
    print(c, list, () => table(rows, columns));
  },
  async 'task show'(c) {
    const t = await task(c, arg(c, 0, 'id'));
    const setup = await c.api.setup(t.id);
    const services = t.status === 'archived' ? [] : await c.api.services(t.id);
    const urls = Object.entries(t.ports).map(([declared, port]) => `  ${declared} → http://127.0.0.1:${port}`);
    print(c, { ...t, setup, services }, () =>
      [
        table([{ ...t }], ['id', ...TASK_COLS.slice(1), 'base', 'worktree_path', 'created_at']),
        ...(urls.length > 0 ? ['', 'ports:', ...urls] : []),
        ...(services.length > 0 ? ['', 'services:', ...table(services.map(serviceRow), SERVICE_COLS).split('\n').map((l) => `  ${l}`)] : []),
        '',
        'setup:',
        ...(setup.commands.length === 0 ? ['  (no setup commands)'] : setup.commands.map((x) => `  $ ${x.command}  → exit ${x.exit_code ?? x.signal}${x.timed_out ? ' (timed out)' : ''}${x.interrupted ? ' (interrupted)' : ''}`)),
        ...setup.lines.map((l) => `  ${l.stream === 'stderr' ? '!' : '|'} ${l.text}`),
      ].join('\n'),
    );
  },
  async 'task rm'(c) {
    const t = await task(c, arg(c, 0, 'id'));
    const r = await c.api.removeTask(t.id, c.values.force === true);
    print(c, r, () => `archived task ${r.name}; branch ${r.branch} kept`);
  },
};
