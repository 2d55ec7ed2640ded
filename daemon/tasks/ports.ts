import { createServer } from 'node:net';
import { GroveError } from '../errors.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import type { PortLeasesTable } from '../store/port-leases.ts';

// Free right now on 127.0.0.1: something else on the machine may hold a port no task holds.
export function bindsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host: '127.0.0.1', port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

// Hands out host ports from the configured range: never one a live task holds, always one
// that binds free at that moment. One allocation at a time, with its reservation.
export function createPortAllocator(opts: { leases: PortLeasesTable; range: [number, number] }) {
  const mutex = createKeyedMutex();
  const [from, to] = opts.range;
  return {
    // Picks ports for `declared` and calls `reserve` with them before the next allocation starts.
    allocate<T>(declared: number[], reserve: (ports: Record<number, number>) => Promise<T>): Promise<T> {
      return mutex.run('ports', async () => {
        const ports: Record<number, number> = {};
        if (declared.length > 0) {
          const held = await opts.leases.held();
          let candidate = from;
          for (const d of declared) {
            for (; candidate <= to; candidate++) {
              if (!held.has(candidate) && (await bindsFree(candidate))) break;
            }
            if (candidate > to) {
              throw new GroveError('UNAVAILABLE', `no free port left in port_range [${from}, ${to}] for declared port ${d}`);
            }
            ports[d] = candidate++;
          }
        }
        return reserve(ports);
      });
    },
  };
}

export type PortAllocator = ReturnType<typeof createPortAllocator>;
