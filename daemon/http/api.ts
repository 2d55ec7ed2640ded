import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CommandAnswer } from '../../schemas/host.ts';
import type { Logger } from '../runtime/log.ts';
import { compile, createAjv, type Validator } from '../runtime/validation.ts';
import { assertJsonContentType, discardBody, drainUnread, hasBody, readJson } from './body.ts';
import { GroveError, isDiskFull, PROBLEM_CONTENT_TYPE, problemBody, type ErrorCode, type ValidationIssue } from '../errors.ts';
import { COMMAND_HEADER, type Remote, type Reply, type Route } from './route.ts';
import { createRouter } from './router.ts';
import { StoreUnreachableError } from '../store/store.ts';

type Check = ((value: unknown) => boolean) & Pick<Validator<unknown>, 'issues'>;

interface Validators {
  params?: Check;
  query?: Check;
  body?: Check;
}

// The API's request pipeline: route, validate, run the handler, answer JSON or a problem.
// With `remote` (a team's store), a request on another host's resource is run there (DESIGN §14.2).
export function createApiHandler(opts: { routes: Route[]; log: Logger; remote?: Remote }) {
  const { log, remote } = opts;
  const router = createRouter(opts.routes);
  const bodyAjv = createAjv();
  const queryAjv = createAjv({ coerce: true });
  // Every route's validators, each compiled at its first use (runtime/validation.ts).
  const validators = new Map<Route, Validators>();
  for (const r of router.routes) {
    validators.set(r, {
      ...(r.params ? { params: compile(bodyAjv, r.params) } : {}),
      ...(r.query ? { query: compile(queryAjv, r.query) } : {}),
      ...(r.body ? { body: compile(bodyAjv, r.body) } : {}),
    });
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<Reply> {
    const arrived = Date.now();
    const target = req.url ?? '';
    if (!target.startsWith('/')) throw new GroveError('NOT_FOUND', 'request targets must be a path');
    const url = new URL(target, 'http://grove.invalid');
    const match = router.match(req.method ?? 'GET', url.pathname);
    if (match.kind === 'none') throw new GroveError('NOT_FOUND', `no endpoint at ${url.pathname}`);
    if (match.kind === 'method') {
      throw new GroveError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${url.pathname}`, {
        headers: { allow: match.allow.join(', ') },
      });
    }
    const { route, params } = match;
    const v = validators.get(route)!;

    if (v.params && !v.params(params)) {
      const bad = Object.entries(params).map(([k, val]) => `${k} ${JSON.stringify(safeDecode(val))}`);
      throw new GroveError('INVALID_ID', `${bad.join(', ')} is not a lowercase UUID`);
    }

    const query = Object.create(null) as Record<string, string>;
    for (const [k, val] of url.searchParams) {
      if (Object.hasOwn(query, k)) throw validation(`/${k}`, 'is given more than once');
      query[k] = val;
    }
    if (v.query) {
      if (!v.query(query)) throw new GroveError('VALIDATION_FAILED', 'the query string is invalid', { errors: v.query.issues() });
    } else if (Object.keys(query).length > 0) {
      throw validation(`/${Object.keys(query)[0]}`, 'is not an allowed query parameter');
    }

    let body: unknown = undefined;
    const withBody = hasBody(req);
    if (withBody) assertJsonContentType(req);
    if (v.body) {
      // No body where every field is optional is the empty object (a merge with the defaults).
      const optional = ((route.body as { required?: string[] }).required ?? []).length === 0;
      body = withBody ? await readJson(req) : optional ? {} : undefined;
      if (!v.body(body)) {
        const issues = body === undefined ? [{ path: '/', message: 'a JSON body is required' }] : v.body.issues();
        throw new GroveError('VALIDATION_FAILED', 'the request body is invalid', { errors: issues });
      }
    } else if (withBody) {
      await discardBody(req);
    }

    if (route.place) body = await route.place(body);
    // A command another host sent is this host's to run, whoever the store now says owns the row.
    if (remote && route.owner && req.headers[COMMAND_HEADER] === undefined) {
      const id = route.ownerIn === 'body' ? (body as Record<string, unknown>)[`${route.owner}_id`] : params.id;
      const owner = typeof id === 'string' ? await remote.elsewhere(route.owner, id) : null;
      if (owner !== null) {
        if (route.remote === 'refuse') {
          throw new GroveError('REMOTE_REFUSED', `${req.method} ${url.pathname} runs only on the ${route.owner}'s own host, ${await remote.nameOf(owner)}; ask there`);
        }
        const text = body === undefined ? null : JSON.stringify(body);
        const answer = await remote.forward(owner, {
          method: req.method ?? 'GET',
          path: target,
          headers: text === null ? {} : { 'content-type': 'application/json' },
          body: text,
        });
        sendRaw(req, res, answer);
        return null;
      }
    }

    return route.handler({ params, query, body, req, res, log, signal: untilGone(res), arrived });
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    dispatch(req, res).then(
      (reply) => {
        if (reply) sendJson(res, reply.status, reply.body, reply.headers);
      },
      (err: unknown) => sendError(req, res, err, log),
    );
  };
}

// Aborted when the connection closes before the answer was written: what runs for it can stop.
function untilGone(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort(new Error('the client has gone'));
  });
  return gone.signal;
}

function validation(path: string, message: string): GroveError {
  return new GroveError('VALIDATION_FAILED', `${path.slice(1)} ${message}`, { errors: [{ path, message }] });
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// When a client told the store is unavailable may ask again: soon, since nothing has to be
// reopened by hand (the next statement connects afresh).
const STORE_RETRY_AFTER_S = 2;

const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

// A JSON answer; 204 and HEAD get none.
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  if (status === 204 || body === undefined) {
    res.writeHead(status, { ...COMMON_HEADERS, ...headers });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

// The owner's answer to a forwarded request, as it wrote it: status, content type, bytes.
function sendRaw(req: IncomingMessage, res: ServerResponse, a: CommandAnswer): void {
  if (res.headersSent) return;
  const empty = a.status === 204 || a.status === 304;
  res.writeHead(a.status, { ...COMMON_HEADERS, ...a.headers, ...(empty ? {} : { 'content-length': a.body.length }) });
  res.end(empty || req.method === 'HEAD' ? undefined : a.body);
}

// Any failure becomes a problem document; unexpected ones are logged and answered 500 without detail.
export function sendError(req: IncomingMessage, res: ServerResponse, err: unknown, log: Logger): void {
  let code: ErrorCode;
  let detail: string;
  let ge: GroveError | null = null;
  let headers: Record<string, string> | undefined;
  if (err instanceof GroveError) {
    ge = err;
    code = err.code;
    detail = err.detail;
  } else if (err instanceof StoreUnreachableError) {
    // Not this request's fault and not a bug: the store is gone for now and recovers by itself.
    log.warn({ method: req.method, url: req.url, reason: err.message }, 'request failed: the store cannot be reached');
    code = 'STORE_UNAVAILABLE';
    detail = `${err.message}; try again shortly`;
    headers = { 'retry-after': String(STORE_RETRY_AFTER_S) };
  } else if (isDiskFull(err)) {
    log.warn({ err, method: req.method, url: req.url }, 'request failed: the data folder\'s disk is full');
    code = 'INSUFFICIENT_STORAGE';
    detail = 'the disk of the data folder is full; free space and try again';
  } else {
    log.error({ err, method: req.method, url: req.url }, 'request failed');
    code = 'INTERNAL';
    detail = 'an internal error occurred; see the daemon log';
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeProblem(req, res, code, detail, ge ? { errors: ge.errors, headers: ge.headers, files: ge.files } : { headers });
}

// The one way a problem document is written, by the API and by the TCP front alike.
export function writeProblem(
  req: IncomingMessage,
  res: ServerResponse,
  code: ErrorCode,
  detail: string,
  opts: { errors?: ValidationIssue[] | undefined; headers?: Record<string, string> | undefined; files?: string[] | undefined } = {},
): void {
  const body = problemBody(code, detail, opts.errors, opts.files);
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    ...COMMON_HEADERS,
    'content-type': PROBLEM_CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    ...(opts.headers ?? {}),
  };
  if (drainUnread(req).close) headers.connection = 'close';
  res.writeHead(body.status, headers);
  res.end(text);
}
