import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from '../runtime/log.ts';
import type { ErrorCode } from '../errors.ts';

export type Method = 'GET' | 'POST' | 'DELETE';

export interface Context<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
  /** aborted when the client goes before its answer was written */
  signal: AbortSignal;
}

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
  handler: (ctx: Context<Static<P>, Static<Q>, Static<B>>) => Promise<Reply>;
}

// Keeps the handler's context typed from the route's own schemas.
export function route<P extends TSchema, Q extends TSchema, B extends TSchema>(r: Route<P, Q, B>): Route {
  return r as unknown as Route;
}
