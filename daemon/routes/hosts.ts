import { HostList } from '../../schemas/host.ts';
import { route, type Route } from '../http/route.ts';
import type { HostsTable } from '../store/hosts.ts';

// /api/hosts: every daemon of the store (DESIGN §14.1, §14.2).
export function hostRoutes(deps: { hosts: Pick<HostsTable, 'list'> }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/hosts',
      summary: 'List the hosts of the store, with whether each is online and its running sessions',
      responses: { 200: HostList },
      handler: async () => ({ status: 200, body: await deps.hosts.list() }),
    }),
  ];
}
