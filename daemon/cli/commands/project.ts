// `grove project add|ls|rm`, `pool` and `conflicts`: the repositories grove manages.
import path from 'node:path';
import type { Command } from '../ctx.ts';
import { arg, print, str } from '../ctx.ts';
import { duration, shortId, table } from '../format.ts';
import { project, withHost } from '../lookup.ts';
import { short } from '../render.ts';

export const commands: Record<string, Command> = {
  async 'project add'(c) {
    const name = str(c.values.name);
    const p = await c.api.addProject({ path: path.resolve(arg(c, 0, 'path')), ...(name !== undefined ? { name } : {}) });
    print(c, p, () => `added project ${p.name} (${p.id}) at ${p.path}`);
  },
  async 'project ls'(c) {
    const list = await c.api.projects();
    const [rows, columns] = await withHost(c, short(list), ['id', 'name', 'path']);
    print(c, list, () => table(rows, columns));
  },
  async 'project rm'(c) {
    const p = await project(c, arg(c, 0, 'id|name'));
    await c.api.removeProject(p.id);
    print(c, { removed: p.id }, () => `removed project ${p.name}`);
  },
  async pool(c) {
    const p = await project(c, arg(c, 0, 'project'));
    const wp = await c.api.pool(p.id);
    const rows = wp.slots.map((x) => ({ id: shortId(x.id), status: x.status, base: x.base, commit: x.base_commit.slice(0, 10), age: duration(x.created_at) }));
    print(c, wp, () =>
      wp.size === 0 && rows.length === 0
        ? `project ${p.name} has no warm pool (.grove.json: "pool": {"size": N})`
        : [`project ${p.name}: pool of ${wp.size}${wp.ttl_s === null ? '' : `, ttl ${wp.ttl_s} s`}`, table(rows, ['id', 'status', 'base', 'commit', 'age'])].join('\n'),
    );
  },
  async conflicts(c) {
    const p = await project(c, arg(c, 0, 'project'));
    const [list, tasks] = await Promise.all([c.api.conflicts(p.id), c.api.tasks({ project_id: p.id })]);
    const name = (id: string) => (id === 'base' ? 'its base' : (tasks.find((x) => x.id === id)?.name ?? id));
    print(c, list, () => (list.length === 0 ? 'no conflicts' : table(list.map((x) => ({ task: name(x.task_id), with: name(x.with), files: x.files.join(' ') })), ['task', 'with', 'files'])));
  },
};
