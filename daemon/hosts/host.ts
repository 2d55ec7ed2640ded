import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UUID_PATTERN } from '../../schemas/common.ts';
import { once } from '../runtime/once.ts';
import type { Logger } from '../runtime/log.ts';
import type { HostsTable } from '../store/hosts.ts';

// How often a host says it is alive (DESIGN §14.2); ONLINE_S (store/hosts.ts) is three of them.
export const HEARTBEAT_MS = 5000;

const ID_FILE = 'host-id';

// This daemon's host id: made once and kept in its data folder, so it survives restarts and
// upgrades (and moves with a copied data folder). A file that is not an id is replaced.
export function hostIdOf(dataDir: string): string {
  const file = path.join(dataDir, ID_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (new RegExp(UUID_PATTERN).test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = randomUUID();
  // Written whole or not at all: a crash mid-write must not leave a half id to be replaced later.
  const tmp = `${file}.${process.pid}`;
  writeFileSync(tmp, `${id}\n`, { mode: 0o600 });
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return id;
}

export interface Heartbeat {
  close(): Promise<void>;
}

// Registers this host (host.online), then beats every HEARTBEAT_MS, each beat also recording
// other hosts gone stale as offline; close() stops the beats and records this host offline.
export async function startHeartbeat(deps: { hosts: HostsTable; id: string; name: string; version: string; acceptRemote: boolean; log: Logger }): Promise<Heartbeat> {
  const { hosts, id, log } = deps;
  await hosts.start({ id, name: deps.name, version: deps.version, accept_remote: deps.acceptRemote });
  log.info({ host_id: id, name: deps.name }, 'host online');
  let timer: NodeJS.Timeout | null = null;
  let beating: Promise<void> = Promise.resolve();
  let closed = false;
  // One beat after the other: a slow store delays the next beat rather than piling them up.
  const schedule = () => {
    timer = setTimeout(() => {
      beating = hosts
        .beat(id)
        .catch((err: unknown) => log.warn({ err }, 'heartbeat failed'))
        .finally(() => {
          if (!closed) schedule();
        });
    }, HEARTBEAT_MS);
  };
  // The first beat at once: a host left stale before this one started is recorded offline now.
  beating = hosts.beat(id).finally(schedule);
  await beating;
  return {
    close: once(async () => {
      closed = true;
      if (timer) clearTimeout(timer);
      await beating;
      await hosts.stop(id).catch((err: unknown) => log.warn({ err }, 'recording this host offline failed'));
    }),
  };
}
