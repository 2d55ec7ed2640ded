import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';
import { EVENT_TYPES } from './event-types.ts';
import { EVENT_PAGE_MAX } from './pages.ts';

export { EVENT_TYPES } from './event-types.ts';
export { EVENT_PAGE_MAX } from './pages.ts';

// What changed (DESIGN §11).
export const EventType = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)), { $id: 'EventType' });
export type EventType = Static<typeof EventType>;

export const GroveEvent = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, description: 'only grows, across daemon restarts' }),
    type: EventType,
    at: Timestamp,
    project_id: Type.Union([Id, Type.Null()]),
    task_id: Type.Union([Id, Type.Null()]),
    session_id: Type.Union([Id, Type.Null()]),
    host_id: Type.Union([Id, Type.Null()], { description: 'the host where it happened (DESIGN §14.2); null for events recorded before hosts' }),
    data: Type.Unknown({ description: 'the project, task or session as it now is, as its REST endpoint returns it' }),
  },
  { $id: 'Event' },
);
export type GroveEvent = Static<typeof GroveEvent>;

// The largest seq a query may name (a 53-bit safe integer in JSON).
export const MAX_EVENT_SEQ = Number.MAX_SAFE_INTEGER;

// How many events a page has when the query does not say (the most: EVENT_PAGE_MAX).
export const EVENT_PAGE_DEFAULT = 1000;

export const EventQuery = Type.Object(
  {
    project_id: Type.Optional(Id),
    task_id: Type.Optional(Id),
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_EVENT_SEQ })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENT_PAGE_MAX })),
  },
  { additionalProperties: false },
);
export type EventQuery = Static<typeof EventQuery>;

export const EventPage = Type.Object(
  {
    events: Type.Array(GroveEvent),
    next: Type.Integer({ description: 'the `after` for the next page: the last seq returned, or `after` when none' }),
  },
  { $id: 'EventPage' },
);
export type EventPage = Static<typeof EventPage>;
