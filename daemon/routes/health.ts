import { Health } from '../../schemas/health.ts';
import { route, type Route } from '../http/route.ts';

// Liveness and identity of the daemon: what answers, since when.
export function healthRoutes(deps: { version: string; startedAt: string; socket: string; port: () => number | null; lastEventSeq: () => number; hostId: string; shared: boolean }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/health',
      summary: 'Daemon health',
      responses: { 200: Health },
      handler: async () => {
        const body: Health = { status: 'ok', version: deps.version, pid: process.pid, started_at: deps.startedAt, socket: deps.socket, port: deps.port(), host_id: deps.hostId, shared: deps.shared, last_event_seq: deps.lastEventSeq() };
        return { status: 200, body };
      },
    }),
  ];
}
