// `grove service ls|start|stop`: the services of a task's .grove.json.
import { isLive } from '../../../schemas/session-status.ts';
import type { Command } from '../ctx.ts';
import { arg, print } from '../ctx.ts';
import { CliError, EXIT } from '../errors.ts';
import { shortId, table } from '../format.ts';
import { task } from '../lookup.ts';
import { SERVICE_COLS, serviceRow } from '../render.ts';

export const commands: Record<string, Command> = {
  async 'service ls'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const list = await c.api.services(t.id);
    print(c, list, () => table(list.map(serviceRow), SERVICE_COLS));
  },
  async 'service start'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const s = await c.api.startService(t.id, arg(c, 1, 'service'));
    const ports = Object.values(t.ports);
    print(c, s, () => `service ${s.agent} ${s.status}, pid ${s.pid}, session ${shortId(s.id)}${ports.length > 0 ? `; ${ports.map((p) => `http://127.0.0.1:${p}`).join(' ')}` : ''}`);
  },
  async 'service stop'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    const name = arg(c, 1, 'service');
    const svc = (await c.api.services(t.id)).find((x) => x.name === name);
    if (!svc) throw new CliError(`task ${t.name} has no service ${JSON.stringify(name)}`, EXIT.API, { code: 'NOT_FOUND', detail: `no service ${name}`, status: 404 });
    if (!svc.session || !isLive(svc.session.status)) {
      throw new CliError(`service ${name} is not running`, EXIT.API, { code: 'SESSION_NOT_RUNNING', detail: `service ${name} is not running`, status: 409 });
    }
    const r = await c.api.kill(svc.session.id);
    print(c, { id: svc.session.id, ...r }, () => `service ${name} stopped`);
  },
};
