import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';

// A daemon on the store (DESIGN §14.2): its id is kept in its data folder, its name comes from the
// user config's host_name (default the machine's host name), its times from the store's clock.
export const Host = Type.Object(
  {
    kind: Type.Literal('team', { description: 'a daemon keeping its state in this store (DESIGN §14.2)' }),
    id: Id,
    name: Type.String(),
    version: Type.String({ description: "the grove version it last started with" }),
    online: Type.Boolean({ description: 'its heartbeat was seen in the last 15 s, it has not stopped, and no command to it was withdrawn untaken since it last looked for commands' }),
    started_at: Timestamp,
    seen_at: Timestamp,
    running: Type.Integer({ minimum: 0, description: 'its sessions that are starting or running' }),
    accept_remote: Type.Boolean({ description: 'it runs requests other hosts forward to it (user config accept_remote)' }),
  },
  { $id: 'Host' },
);
export type Host = Static<typeof Host>;

export const HostList = Type.Array(Host);
export type HostList = Static<typeof HostList>;
