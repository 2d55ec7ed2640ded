// Forwarding to the owner (DESIGN §14.2), both sides of it on one host: the requester
// (requester.ts) and the owner's loop (owner.ts), closed in that order.
import type { Remote } from '../http/route.ts';
import { once } from '../runtime/once.ts';
import type { Logger } from '../runtime/log.ts';
import type { CommandsTable } from '../store/commands.ts';
import type { HostsTable } from '../store/hosts.ts';
import type { Store } from '../store/store.ts';
import { createOwner, type Owner } from './owner.ts';
import { createRequester } from './requester.ts';

export interface Commands extends Remote, Omit<Owner, 'close'> {
  close(): Promise<void>;
}

export function createCommands(deps: { store: Store; rows: CommandsTable; hosts: HostsTable; hostId: string; acceptRemote: boolean; socketPath: string; log: Logger }): Commands {
  const requester = createRequester(deps);
  const owner = createOwner(deps);
  return {
    elsewhere: requester.elsewhere,
    nameOf: requester.nameOf,
    forward: requester.forward,
    start: owner.start,
    stop: owner.stop,
    close: once(async () => {
      await requester.close();
      await owner.close();
    }),
  };
}
