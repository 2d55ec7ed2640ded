import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Dispatcher } from 'undici';
import { drainUnread } from './body.ts';
import { COMMAND_HEADER } from './route.ts';

// Per RFC 9110 these describe one connection and must not be forwarded.
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  // Says a request is a command another host forwarded (DESIGN §14.2): only the owner's own
  // command loop may send it, never a client of the front or of another host's forwarder.
  COMMAND_HEADER,
]);

// Why an upstream request was aborted: the client went away, which needs no answer or log.
class ClientGone extends Error {}

function endToEnd(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  return out;
}

// Streams a request to `upstream` at `path` and its answer back, body and event streams
// included, both ways with back-pressure; a client that goes away aborts the upstream request.
// `unreachable` answers when the upstream failed before its answer began.
export function proxy(upstream: Dispatcher, req: IncomingMessage, res: ServerResponse, opts: { path: string; unreachable: (err: Error) => void }): void {
  const withBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  res.once('finish', () => {
    if (req.complete) return;
    req.unpipe();
    drainUnread(req);
  });
  // undici's dispatch() with a handler that writes straight into `res`: request() would wrap
  // the answer in a Readable for pipeline() to copy again (docs/decisions/the-tcp-front.md).
  upstream.dispatch(
    {
      method: req.method as 'GET',
      path: opts.path,
      headers: endToEnd(req.headers),
      // Through a PassThrough: undici destroys a body it stops reading (on an early answer
      // such as 413), and destroying `req` itself would reset the client's connection.
      body: withBody ? req.pipe(new PassThrough()) : null,
    },
    {
      onRequestStart(controller) {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new ClientGone());
        });
      },
      onResponseStart(_controller, statusCode, upHeaders) {
        res.writeHead(statusCode, endToEnd(upHeaders));
        // An answer of unknown length is a stream (SSE): its headers must reach the client
        // before its first event. Others go out with their first body chunk.
        if (upHeaders['content-length'] === undefined) res.flushHeaders();
      },
      onResponseData(controller, chunk) {
        if (res.write(chunk)) return;
        controller.pause();
        res.once('drain', () => controller.resume());
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError(_controller, err) {
        if (err instanceof ClientGone || res.destroyed) return;
        if (res.headersSent) return void res.destroy();
        opts.unreachable(err);
      },
    },
  );
}
