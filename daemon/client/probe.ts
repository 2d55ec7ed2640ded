// Whether a saved SSH host's daemon answers (DESIGN §14.1): its forward opened and its
// /api/health answered within a bound. The daemon's GET /api/hosts and `grove host ls` without a
// daemon both say it so.
import type { SavedHost, SshHost } from '../../schemas/host.ts';

// How long one host may take, forward and answer; past it, it is shown unreachable: a list never
// waits on the slowest machine for long.
export const PROBE_MS = 10_000;

export interface Prober {
  /** the local socket that reaches the host's daemon (its forward, opened if need be) */
  socketOf(url: string): Promise<string>;
  /** that daemon's /api/health; throws when it did not answer 200 */
  health(socket: string, signal: AbortSignal): Promise<{ version?: unknown }>;
  ms?: number;
  /** why the host was not reachable */
  failed?(host: SavedHost, reason: string): void;
}

export async function probeHost(h: SavedHost, p: Prober): Promise<SshHost> {
  const down: SshHost = { kind: 'ssh', name: h.name, url: h.url, reachable: false, version: null };
  const signal = AbortSignal.timeout(p.ms ?? PROBE_MS);
  const late = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  late.catch(() => {});
  try {
    const socket = await Promise.race([p.socketOf(h.url), late]);
    const body = await Promise.race([p.health(socket, signal), late]);
    if (typeof body.version !== 'string') return down;
    return { ...down, reachable: true, version: body.version };
  } catch (err) {
    p.failed?.(h, (err as Error).message);
    return down;
  }
}
