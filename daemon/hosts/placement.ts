import type { Project } from '../../schemas/project.ts';
import type { CreateTaskBody } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import { normaliseOrigin } from '../git/origin.ts';
import type { HostsTable } from '../store/hosts.ts';

// By code unit, not localeCompare: every host picks alike in every locale.
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const invalid = (path: string, message: string) => new GroveError('VALIDATION_FAILED', `${path.slice(1)} ${message}`, { errors: [{ path, message }] });

// Placement (DESIGN §14.2): a task asked for by repository goes to a project of it on the host
// named, or on the online host (that runs other hosts' requests, or this one) with the fewest
// running sessions, ties by host name. The body comes back with that project's id, as if the
// client had given it; forwarding then takes it to its host.
export function createPlacement(deps: { hosts: HostsTable; listProjects: () => Promise<Project[]>; hostId: string }) {
  return async function place(body: CreateTaskBody): Promise<CreateTaskBody> {
    const { repository, host, ...rest } = body;
    if (body.project_id !== undefined && repository !== undefined) throw invalid('/repository', 'must not be given with project_id');
    if (body.project_id === undefined && repository === undefined) throw invalid('/project_id', 'or repository is required');
    if (host !== undefined && repository === undefined) throw invalid('/host', 'is only given with repository');
    if (repository === undefined) return body;

    const names = new Set([repository, normaliseOrigin(repository, '/')]);
    const projects = (await deps.listProjects()).filter((p) => p.repository !== null && names.has(p.repository));
    if (projects.length === 0) throw new GroveError('NOT_FOUND', `no host has a project of repository ${JSON.stringify(repository)}`);
    const hosts = await deps.hosts.list();
    const on = projects.flatMap((p) => hosts.filter((h) => h.id === p.host_id).map((h) => ({ p, h })));

    if (host !== undefined) {
      if (!hosts.some((h) => h.name === host)) throw new GroveError('NOT_FOUND', `no host is called ${JSON.stringify(host)}`);
      const named = on.find((x) => x.h.name === host);
      if (!named) throw new GroveError('NOT_FOUND', `host ${JSON.stringify(host)} has no project of repository ${JSON.stringify(repository)}`);
      return { ...rest, project_id: named.p.id };
    }
    const online = on.filter((x) => x.h.online);
    if (online.length === 0) throw new GroveError('HOST_OFFLINE', `every host with a project of repository ${JSON.stringify(repository)} is offline`);
    const willing = online.filter((x) => x.h.accept_remote || x.h.id === deps.hostId);
    if (willing.length === 0) throw new GroveError('REMOTE_REFUSED', `the online hosts with a project of repository ${JSON.stringify(repository)} do not run requests from other hosts`);
    willing.sort((x, y) => x.h.running - y.h.running || byCodeUnit(x.h.name, y.h.name) || byCodeUnit(x.p.id, y.p.id));
    return { ...rest, project_id: willing[0]!.p.id };
  };
}
