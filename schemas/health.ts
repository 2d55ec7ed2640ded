import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, UUID_PATTERN } from './common.ts';

export const Health = Type.Object(
  {
    status: Type.Literal('ok'),
    version: Type.String(),
    pid: Type.Integer(),
    started_at: Timestamp,
    socket: Type.String({ description: 'the API unix socket' }),
    port: Type.Union([Type.Integer(), Type.Null()], { description: 'the TCP front port, null when off' }),
    host_id: Type.String({ pattern: UUID_PATTERN, description: 'this daemon as a host of the store (GET /api/hosts): the host_id of what it holds' }),
    shared: Type.Boolean({ description: 'the store is shared by a team (PostgreSQL, DESIGN §14.2): lists carry every host\'s projects, tasks and sessions' }),
    last_event_seq: Type.Integer({ minimum: 0, description: 'the newest event: load the state, then follow GET /api/events?after= this to miss no change' }),
  },
  { $id: 'Health' },
);
export type Health = Static<typeof Health>;
