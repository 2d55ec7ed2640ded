import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from '../runtime/log.ts';
import type { ErrorCode } from '../errors.ts';
import type { CommandAnswer, CommandRequest, OwnerKind } from '../../schemas/host.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface Context<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
  /** aborted when the client goes before its answer was written */
  signal: AbortSignal;
  /** when the request arrived (Date.now()): a bound on its work counts from then */
  arrived: number;
}

export type { OwnerKind };

// What the API asks of the team (DESIGN §14.2): whose a row is, and a request run on its owner.
export interface Remote {
  /** the host holding the row, null when it is this one's or there is no such row */
  elsewhere(kind: OwnerKind, id: string): Promise<string | null>;
  /** the host by id, for messages */
  nameOf(hostId: string): Promise<string>;
  /** runs the request on `hostId` and gives its answer as the owner wrote it */
  forward(hostId: string, req: CommandRequest): Promise<CommandAnswer>;
}

// Marks a request as a command the owner runs for another host: it is never forwarded again.
export const COMMAND_HEADER = 'grove-command';

// A handler answers with data; `null` means it wrote the response itself (streams).
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | null;

// One row of the route table: everything about an endpoint, as data.
export interface Route<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: Method;
  path: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** status → response body schema (null: no body); used for the OpenAPI document. */
  responses: Record<number, TSchema | null>;
  /** the media type of the success answers when it is not JSON (the handler writes them itself) */
  produces?: string;
  /** error codes this endpoint can answer besides the generic ones. */
  errors?: ErrorCode[];
  /**
   * whose resource the route acts on (DESIGN §14.2): the row of this kind named by the path's
   * `id`, or with `ownerIn: 'body'` by the body's `<kind>_id`. A request on another host's is
   * run there (forwarded), or refused with `remote: 'refuse'`. Reads the store answers have none.
   */
  owner?: OwnerKind;
  ownerIn?: 'params' | 'body';
  remote?: 'forward' | 'refuse';
  /** turns a valid body into the one the owner is found from (placement), before the owner is looked up */
  place?: (body: Static<B>) => Promise<Static<B>>;
  handler: (ctx: Context<Static<P>, Static<Q>, Static<B>>) => Promise<Reply>;
}

// Keeps the handler's context typed from the route's own schemas.
export function route<P extends TSchema, Q extends TSchema, B extends TSchema>(r: Route<P, Q, B>): Route {
  return r as unknown as Route;
}
