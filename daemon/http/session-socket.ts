// A session's own socket (DESIGN §18): how the bridges of a confined agent reach the daemon. It
// answers only the two calls of an ask (daemon/bridges/ask.ts), only for its own session, through
// the API's own routes, validation and problem bodies; everything else is refused, so an agent
// can neither decide its own approvals nor start or kill anything.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UUID_PATTERN } from '../../schemas/common.ts';
import { GroveError } from '../errors.ts';
import type { Logger } from '../runtime/log.ts';
import { createApiHandler, sendError, writeProblem } from './api.ts';
import type { Route } from './route.ts';
import { createRouter } from './router.ts';
import { listenOnSocket, type Listener } from './server.ts';

// The two calls of a bridge's ask: the ask itself and the long poll for its verdict.
const ASK = { method: 'POST', path: '/api/sessions/:id/approvals' };
const WAIT = { method: 'GET', path: '/api/approvals/:id' };
const SERVED = [ASK, WAIT];

const isId = (s: string) => new RegExp(UUID_PATTERN).test(s);

export interface SessionSocketsDeps {
  /** the API's routes, or at least the two a session's socket serves: it runs the same ones */
  routes: Route[];
  /** the approval service's read: an approval's session, NOT_FOUND when there is none */
  approvals: { get(id: string): Promise<{ session_id: string }> };
  log: Logger;
}

export interface SessionSockets {
  /** listens on `socketPath` for session `sessionId` (its folder made 0700, a stale socket replaced, one already open for the session closed first) */
  open(sessionId: string, socketPath: string): Promise<void>;
  /** stops the session's socket and removes its file; nothing when none is open */
  close(sessionId: string): Promise<void>;
  /** every session's, at the daemon's stop; no socket opens after it */
  closeAll(): Promise<void>;
}

export function createSessionSockets(deps: SessionSocketsDeps): SessionSockets {
  const { approvals, log } = deps;
  const served = deps.routes.filter((r) => SERVED.some((s) => s.method === r.method && s.path === r.path));
  if (served.length !== SERVED.length) throw new Error('the routes given lack the ask of approvals or its wait');
  const router = createRouter(served);
  const api = createApiHandler({ routes: served, log });
  const opened = new Map<string, Promise<Listener>>();
  let closed = false;

  // Why the request is not this session's to make, or null when it is.
  async function refusal(sessionId: string, req: IncomingMessage): Promise<string | null> {
    const everything = `this socket answers only session ${sessionId}'s asks for approval (POST ${ASK.path.replace(':id', sessionId)}) and waits on their verdicts (GET /api/approvals/ID)`;
    const target = req.url ?? '';
    if (!target.startsWith('/')) return everything;
    const match = router.match(req.method ?? '', new URL(target, 'http://grove.invalid').pathname);
    // HEAD matches the GET route; it is not one of the two calls.
    if (match.kind !== 'found' || match.route.method !== req.method) return everything;
    const id = match.params.id!;
    if (match.route.path === ASK.path) return id === sessionId ? null : `session ${id} is not this socket's; ${everything}`;
    const notOurs = `approval ${id} is not one of session ${sessionId}'s; ${everything}`;
    if (!isId(id)) return notOurs;
    try {
      return (await approvals.get(id)).session_id === sessionId ? null : notOurs;
    } catch (err) {
      // Unknown or another session's: the same answer, so nothing is learnt of other sessions.
      if (err instanceof GroveError && err.code === 'NOT_FOUND') return notOurs;
      throw err;
    }
  }

  function handlerFor(sessionId: string) {
    return (req: IncomingMessage, res: ServerResponse): void => {
      refusal(sessionId, req).then(
        (why) => {
          if (why === null) return api(req, res);
          log.warn({ session: sessionId, method: req.method, url: req.url }, "refused a call on a session's socket");
          writeProblem(req, res, 'SESSION_SOCKET_SCOPE', why);
        },
        (err: unknown) => sendError(req, res, err, log),
      );
    };
  }

  async function close(sessionId: string): Promise<void> {
    const listening = opened.get(sessionId);
    if (listening === undefined) return;
    opened.delete(sessionId);
    await listening.then((l) => l.close(), () => {});
  }

  return {
    async open(sessionId, socketPath) {
      if (closed) throw new Error('the session sockets are closed: the daemon is stopping');
      const before = opened.get(sessionId);
      const listening = (async () => {
        if (before !== undefined) await before.then((l) => l.close(), () => {});
        return listenOnSocket({ socketPath, handler: handlerFor(sessionId), log: log.child({ session: sessionId }), ownFolder: true });
      })();
      opened.set(sessionId, listening);
      try {
        await listening;
      } catch (err) {
        if (opened.get(sessionId) === listening) opened.delete(sessionId);
        throw err;
      }
    },
    close,
    async closeAll() {
      closed = true;
      await Promise.all([...opened.keys()].map(close));
    },
  };
}
