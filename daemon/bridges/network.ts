// A confined session's blocked host asked about through grove (DESIGN §18, §15): in `read` and
// `edit` the session's proxy (`grove sandbox-net --ask`) holds the connection until the person
// answers an approval of kind `network`.
import { randomUUID } from 'node:crypto';
import type { Client } from '../client/calls.ts';
import type { NetTarget } from '../sandbox/proxy.ts';
import { NETWORK_TOOL } from '../../schemas/denials.ts';
import { decide, type Ask } from './ask.ts';

// What the proxy calls for a target its list does not allow: true once allowed. Each question
// has a key of its own (a connection is asked about once; asking again after a daemon restart
// finds the same approval).
export function networkAsk(api: Client, session: string, signal: AbortSignal): (t: NetTarget) => Promise<boolean> {
  return async (t) => {
    const ask: Ask = { key: `network:${randomUUID()}`, kind: 'network', tool: NETWORK_TOOL, input: { host: t.host, port: t.port } };
    const verdict = await decide(api, session, ask, signal);
    return verdict.behavior === 'allow';
  };
}
