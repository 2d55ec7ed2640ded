// Entities named on the command line: by id, unique id prefix, name, or NAME@HOST on a team.
import type { Automation } from '../../schemas/automation.ts';
import type { TeamHost } from '../../schemas/host.ts';
import type { Project } from '../../schemas/project.ts';
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import type { Client } from '../client/calls.ts';
import { str, type Ctx, type TeamView } from './ctx.ts';
import { CliError, EXIT } from './errors.ts';
import { shortId } from './format.ts';

const notFound = (message: string, detail: string) => new CliError(message, EXIT.API, { code: 'NOT_FOUND', detail, status: 404 });

// One entity out of a list by unique id prefix (or exact name, where names exist).
// `hint`: how to name one of several of the same name.
export function pick<T extends { id: string; name?: string }>(list: T[], key: string, what: string, hint = 'give an id'): T {
  const exact = list.filter((x) => x.id === key || (x.name !== undefined && x.name === key));
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1) throw new CliError(`${what} ${JSON.stringify(key)} is ambiguous: ${exact.map((x) => shortId(x.id)).join(', ')}; ${hint}`, EXIT.USAGE);
  const byPrefix = list.filter((x) => x.id.startsWith(key.toLowerCase()));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1) throw new CliError(`${what} ${JSON.stringify(key)} is ambiguous: ${byPrefix.map((x) => shortId(x.id)).join(', ')}`, EXIT.USAGE);
  throw notFound(`no ${what} matches ${JSON.stringify(key)}`, `no ${what} ${key}`);
}

export async function teamView(api: Client): Promise<TeamView> {
  const [health, hosts] = await Promise.all([api.health(), api.hosts()]);
  const names = new Map(hosts.filter((h) => h.kind === 'team').map((h) => [h.id, h.name]));
  return { shared: health.shared, me: health.host_id, hosts, nameOf: (id) => names.get(id) ?? shortId(id) };
}

// On a shared store, rows with the name of their host and a last column HOST (last: the columns
// of one host keep their places); as they are on a store of one host.
export async function withHost<T extends { host_id: string }>(c: Ctx, rows: T[], columns: string[]): Promise<[Array<T & { host?: string }>, string[]]> {
  const team = await c.team();
  if (!team.shared) return [rows, columns];
  return [rows.map((r) => ({ ...r, host: team.nameOf(r.host_id) })), [...columns, 'host']];
}

function hostNamed(team: TeamView, name: string): string {
  const h = team.hosts.find((x): x is TeamHost => x.kind === 'team' && x.name === name);
  if (!h) throw notFound(`no host named ${JSON.stringify(name)}`, `no host ${name}`);
  return h.id;
}

// A project named on the command line: an id (or a unique prefix of one), a name, or NAME@HOST
// (or `onHost`, from --host). A name that projects of several hosts carry is this host's project
// (the folder here, as before teams), else it must be given with its host.
export async function project(c: Ctx, key: string, onHost?: string): Promise<Project> {
  const list = await c.api.projects();
  let name = key;
  let hostName = onHost;
  const at = key.lastIndexOf('@');
  // A name with an @ of its own stays a name.
  if (hostName === undefined && at > 0 && !list.some((p) => p.name === key)) [name, hostName] = [key.slice(0, at), key.slice(at + 1)];
  if (hostName !== undefined) {
    const hostId = hostNamed(await c.team(), hostName);
    return pick(list.filter((p) => p.host_id === hostId), name, `project on host ${hostName}`);
  }
  return (await thisHosts(c, list, key, 'project')) ?? pick(list, key, 'project');
}

// Of the rows named `key` on several hosts, the one on this daemon's host; else null (pick then
// says the name is ambiguous) or, where no row of that name is here, which host each is on.
async function thisHosts<T extends { id: string; name: string; host_id: string }>(c: Ctx, list: T[], key: string, what: 'project' | 'task'): Promise<T | null> {
  const named = list.filter((x) => x.name === key);
  if (named.length < 2 || named.every((x) => x.host_id === named[0]!.host_id)) return null;
  const team = await c.team();
  const mine = named.filter((x) => x.host_id === team.me);
  if (mine.length === 1) return mine[0]!;
  if (mine.length > 1) return null;
  // A project can be named NAME@HOST; a task by its id.
  const choices = named.map((x) => (what === 'project' ? `${x.name}@${team.nameOf(x.host_id)}` : `${shortId(x.id)} (on ${team.nameOf(x.host_id)})`)).join(', ');
  throw new CliError(`${what} ${JSON.stringify(key)} is on several hosts and not on this one: give one of ${choices}`, EXIT.USAGE);
}

export async function task(c: Ctx, key: string): Promise<Task> {
  const list = await c.api.tasks();
  return (await thisHosts(c, list, key, 'task')) ?? pick(list, key, 'task');
}

// Every task's name by its id: rows that carry a task id show its name.
export async function taskNames(c: Ctx): Promise<Map<string, string>> {
  return new Map((await c.api.tasks()).map((t) => [t.id, t.name]));
}

export async function session(c: Ctx, key: string): Promise<Session> {
  const tasks = await c.api.tasks();
  const all = (await Promise.all(tasks.map((t) => c.api.sessions(t.id)))).flat();
  return pick(all, key, 'session');
}

// An automation: its id (or a unique prefix of one), or its name; with --project P, among that
// project's alone (a project has one automation of each name, other projects may have the same).
export async function automation(c: Ctx, key: string): Promise<Automation> {
  const p = str(c.values.project);
  const list = await c.api.automations(p === undefined ? {} : { project_id: (await project(c, p)).id });
  return pick(list, key, 'automation', 'give an id, or its project with --project');
}
