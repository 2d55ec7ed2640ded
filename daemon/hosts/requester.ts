// The requester's side of forwarding to the owner (DESIGN §14.2): a request on another host's
// resource is written as a command row, the owner woken (NOTIFY), and its answer awaited through
// the store's keyed wake-ups (store/wakes.ts): the notification of that command's answer, or
// their poll should it be missed. The owner's side is owner.ts.
import { randomUUID } from 'node:crypto';
import { GroveError } from '../errors.ts';
import type { OwnerKind, Remote } from '../http/route.ts';
import { once } from '../runtime/once.ts';
import type { Logger } from '../runtime/log.ts';
import { waitFor } from '../runtime/wait.ts';
import { ANSWERED_CHANNEL, COMMAND_POLL_MS as POLL_MS, COMMANDS_CHANNEL, TAKE_WITHIN_S, type CommandAnswer, type CommandsTable } from '../store/commands.ts';
import type { HostsTable } from '../store/hosts.ts';
import type { Store } from '../store/store.ts';
import { createTeamWakes } from '../store/wakes.ts';

export interface Requester extends Remote {
  /** ends the waits (UNAVAILABLE) and stops listening */
  close(): Promise<void>;
}

export function createRequester(deps: { store: Store; rows: CommandsTable; hosts: HostsTable; hostId: string; log: Logger }): Requester {
  const { store, rows, hosts, hostId, log } = deps;
  // close() ends every wait at once: the request may still run on its host.
  const closing = new AbortController();
  const answers = createTeamWakes({ store, channel: ANSWERED_CHANNEL, log, pollMs: POLL_MS });

  async function nameOf(id: string): Promise<string> {
    return (await hosts.get(id))?.name ?? id;
  }

  async function forward(target: string, req: { method: string; path: string; headers: Record<string, string>; body: string | null }): Promise<CommandAnswer> {
    const host = await hosts.get(target);
    if (!host) throw new GroveError('HOST_OFFLINE', `the owning host ${target} has never joined the store`);
    if (!host.accept_remote) throw new GroveError('REMOTE_REFUSED', `host ${host.name} does not run requests from other hosts (accept_remote is false); ask there`);
    if (!host.online) throw new GroveError('HOST_OFFLINE', `host ${host.name} is offline; nothing was sent`);
    const id = randomUUID();
    await rows.insert({ id, host_id: target, from_host_id: hostId, ...req });
    log.info({ command: id, host: host.name, method: req.method, path: req.path }, 'forwarded to the owning host');
    await store.notify(COMMANDS_CHANNEL, target);
    for (;;) {
      if (closing.signal.aborted) throw new GroveError('UNAVAILABLE', 'this daemon is stopping; the request may still run on its host');
      // Until the answer is notified or polled for: waiting before the read, so that an answer
      // stored between the two wakes it.
      const next = waitFor((wake) => [answers.watch(id, wake)], { signal: closing.signal });
      try {
        const c = (await rows.get(id))!;
        switch (c.status) {
          case 'done':
            return c.answer!;
          case 'abandoned':
            throw new GroveError('HOST_OFFLINE', `host ${host.name} stopped while running the request; it may have run in part`);
          case 'withdrawn':
            throw new GroveError('HOST_OFFLINE', `host ${host.name} did not take the request in ${TAKE_WITHIN_S} s; it was withdrawn and will not run`);
          case 'pending':
            if (await rows.withdraw(id)) {
              log.warn({ command: id, host: host.name }, 'the owning host did not take the command; withdrawn');
              await hosts.unresponsive(target);
              throw new GroveError('HOST_OFFLINE', `host ${host.name} did not take the request in ${TAKE_WITHIN_S} s; it was withdrawn and will not run`);
            }
            break;
          case 'taken':
            if (!(await hosts.get(target))?.online) {
              throw new GroveError('HOST_OFFLINE', `host ${host.name} went offline while running the request; it may have run`);
            }
            break;
        }
        await next.done;
      } finally {
        next.stop();
      }
    }
  }

  return {
    async elsewhere(kind: OwnerKind, id: string) {
      const owner = await rows.ownerOf(kind, id);
      return owner !== null && owner !== hostId ? owner : null;
    },
    nameOf,
    forward,
    close: once(async () => {
      closing.abort();
      await answers.close();
    }),
  };
}
