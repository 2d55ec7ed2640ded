import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';

// A daemon on the store (DESIGN §14.2): its id is kept in its data folder, its name comes from the
// user config's host_name (default the machine's host name), its times from the store's clock.
export const TeamHost = Type.Object(
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
  { $id: 'TeamHost' },
);
export type TeamHost = Static<typeof TeamHost>;

// A name a saved host goes by: on the command line (`--host NAME`), in /api/hosts/NAME/… and in
// the dashboard's URL, so nothing that needs quoting or escaping in any of them.
export const HOST_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';
export const HostName = Type.String({ pattern: HOST_NAME_PATTERN, description: 'lowercase letters, digits, - and _; at most 63' });

// A machine reached over SSH (DESIGN §14.1), as saved by `grove host add` in hosts.json.
export const SavedHost = Type.Object(
  {
    name: HostName,
    url: Type.String({ description: 'ssh://[user@]box[:port][?socket=PATH]' }),
  },
  { additionalProperties: false },
);
export type SavedHost = Static<typeof SavedHost>;

export const HostsFile = Type.Object({ hosts: Type.Array(SavedHost) }, { additionalProperties: false });
export type HostsFile = Static<typeof HostsFile>;

// A saved SSH host as GET /api/hosts shows it: whether its daemon answered over the forward just
// now, and the version it said.
export const SshHost = Type.Object(
  {
    kind: Type.Literal('ssh', { description: 'a machine of hosts.json reached over SSH (DESIGN §14.1)' }),
    name: HostName,
    url: Type.String(),
    reachable: Type.Boolean({ description: "its daemon answered /api/health over the host's SSH master" }),
    version: Type.Union([Type.String(), Type.Null()], { description: 'its daemon\'s version, null when not reachable' }),
  },
  { $id: 'SshHost' },
);
export type SshHost = Static<typeof SshHost>;

export const Host = Type.Union([TeamHost, SshHost], { $id: 'Host' });
export type Host = Static<typeof Host>;

export const HostList = Type.Array(Host);
export type HostList = Static<typeof HostList>;

// What a host forwards to a row's owner (DESIGN §14.2), stored as a command row: the kinds of
// rows that have an owner, the request as a client sent it, and the owner's answer as it wrote it.
export const OwnerKind = Type.Union([Type.Literal('task'), Type.Literal('session'), Type.Literal('project'), Type.Literal('approval')]);
export type OwnerKind = Static<typeof OwnerKind>;

export const CommandRequest = Type.Object({
  method: Type.String(),
  path: Type.String({ description: 'with its query string' }),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.Union([Type.String(), Type.Null()], { description: 'the JSON body as text, or null without one' }),
});
export type CommandRequest = Static<typeof CommandRequest>;

export const CommandAnswer = Type.Object({
  status: Type.Integer(),
  headers: Type.Record(Type.String(), Type.String(), { description: 'those that describe the body' }),
  // Bytes are no JSON type: the schema says nothing of them (the commands table stores base64).
  body: Type.Unsafe<Uint8Array>({ description: "the body's bytes" }),
});
export type CommandAnswer = Static<typeof CommandAnswer>;
