import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { ValidationIssue } from '../../schemas/common.ts';
import type { ErrorCode } from '../errors.ts';
import { writeProblem } from './api.ts';

// An upgrade request refused with the API's problem body, on the raw socket an upgrade hands
// over: the same answer a plain request would get, then the connection closed.
export function refuseUpgrade(req: IncomingMessage, socket: Socket, code: ErrorCode, detail: string, errors?: ValidationIssue[]): void {
  if (socket.destroyed) return;
  socket.on('error', () => {});
  const { ServerResponse } = process.getBuiltinModule('node:http');
  const res = new ServerResponse(req);
  res.assignSocket(socket);
  res.on('finish', () => socket.end());
  writeProblem(req, res, code, detail, { errors, headers: { connection: 'close' } });
}

// The request's head as it came, to be sent on: the upgrade is passed through byte for byte, so
// that the socket's answer (a 101, or a problem such as 409 NOT_A_TERMINAL) reaches the client
// whole. Node's parser has refused any header holding a line break.
function requestHead(req: IncomingMessage): string {
  let head = `${req.method} ${req.url} HTTP/1.1\r\n`;
  for (let i = 0; i < req.rawHeaders.length; i += 2) head += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
  return head + '\r\n';
}

// Forwards an upgrade (a WebSocket) from the TCP front to the API's socket and pipes both ways
// until either side closes; `done` runs once then. `unreachable` answers when the socket cannot
// be reached at all.
export function forwardUpgrade(req: IncomingMessage, socket: Socket, head: Buffer, opts: { socketPath: string; done: () => void; unreachable: (err: Error) => void }): void {
  const upstream = connect(opts.socketPath);
  let connected = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    socket.destroy();
    upstream.destroy();
    opts.done();
  };
  socket.on('error', end);
  socket.on('close', end);
  upstream.on('close', end);
  upstream.on('error', (err) => {
    if (connected || ended) return end();
    ended = true;
    opts.done();
    opts.unreachable(err);
  });
  upstream.once('connect', () => {
    connected = true;
    upstream.write(requestHead(req));
    if (head.length > 0) upstream.write(head);
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
}
