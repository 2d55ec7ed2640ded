import { HostList } from '../../schemas/host.ts';
import type { SshHosts } from '../ssh/hosts.ts';
import { route, type Route } from '../http/route.ts';
import type { HostsTable } from '../store/hosts.ts';

// /api/hosts: every daemon of the store (DESIGN §14.2), then the saved SSH hosts, each probed
// over its forward (DESIGN §14.1). /api/hosts/NAME/… is answered before the routes (ssh/hosts.ts).
export function hostRoutes(deps: { hosts: Pick<HostsTable, 'list'>; ssh: Pick<SshHosts, 'list'> }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/hosts',
      summary: 'List the hosts of the store, with whether each is online and its running sessions, and the saved SSH hosts, with whether each answers',
      responses: { 200: HostList },
      handler: async () => {
        const [team, ssh] = await Promise.all([deps.hosts.list(), deps.ssh.list()]);
        return { status: 200, body: [...team, ...ssh] };
      },
    }),
  ];
}
