// GitHub's REST API as grove uses it (DESIGN §20): @octokit/core with its throttling plugin (the
// pace GitHub asks of writes, its rate-limit answers read as GitHub means them) and its retry
// plugin (5xx and network failures tried again with back-off). Around them:
// - each try is bounded (`timeoutMs`), so a GitHub that hangs is a failure that is retried;
// - a GET is conditional (ETag → If-None-Match): a 304 costs nothing of the rate limit and
//   answers with what the last 200 said, kept in memory;
// - while the rate limit is spent (a response's `x-ratelimit-remaining: 0`, a 429, a
//   Retry-After) no request leaves: each fails at once with kind `rate_limited` and `until`.
// The token is read per request from the token source and put in no error.
import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { TokenSource } from './token.ts';

export type GitHubFailure = 'no_token' | 'unauthorized' | 'forbidden' | 'not_found' | 'invalid' | 'rate_limited' | 'unavailable';

// A request that did not go through, as data a caller can show: what kind, GitHub's own message,
// and for `rate_limited` when requests may go again.
export class GitHubError extends Error {
  constructor(
    readonly kind: GitHubFailure,
    message: string,
    readonly status: number | null = null,
    readonly until: Date | null = null,
  ) {
    super(message);
    this.name = 'GitHubError';
  }
}

export interface GitHubDeps {
  apiUrl: string;
  token: TokenSource;
  /** one try's bound */
  timeoutMs: number;
  log: Logger;
  /** tries again after a 5xx or a failure to connect (default 2) */
  retries?: number;
  /** the retry plugin's unit: try n waits n² of it (default 1 s) */
  retryBaseMs?: number;
}

type Params = Record<string, unknown>;
type Method = 'POST' | 'PATCH' | 'PUT' | 'DELETE';

// Lists are read a hundred at a time, and at most this many pages (10,000 items) of one list.
const PER_PAGE = 100;
const MAX_PAGES = 100;
// What the conditional cache keeps at most: a poll's lists, a few per watched repository.
const KEPT_ANSWERS = 5000;

interface Answer {
  status: number;
  data: unknown;
  headers: Record<string, string | number | undefined>;
}

export function createGitHub(deps: GitHubDeps) {
  const { log } = deps;
  const stop = new AbortController();
  const kept = new Map<string, { etag: string; data: unknown; next: string | null }>();
  let spentUntil = 0;

  const spend = (untilMs: number) => {
    if (untilMs > spentUntil) spentUntil = untilMs;
  };
  const limited = () => (Date.now() < spentUntil ? new Date(spentUntil) : null);

  const Client = Octokit.plugin(throttling, retry);
  const octokit = new Client({
    baseUrl: deps.apiUrl.replace(/\/+$/, ''),
    userAgent: 'grove',
    request: {
      fetch: (url: string, init?: RequestInit) => {
        const signals = [stop.signal, AbortSignal.timeout(deps.timeoutMs)];
        if (init?.signal) signals.push(init.signal);
        return fetch(url, { ...init, signal: AbortSignal.any(signals) });
      },
    },
    throttle: {
      // Not retried here: the limit is recorded and every request waits for it (the gate below).
      onRateLimit: (retryAfterS: number) => {
        spend(Date.now() + retryAfterS * 1000);
        return false;
      },
      onSecondaryRateLimit: (retryAfterS: number) => {
        spend(Date.now() + retryAfterS * 1000);
        return false;
      },
    },
    retry: { retries: deps.retries ?? 2, ...(deps.retryBaseMs !== undefined ? { retryAfterBaseValue: deps.retryBaseMs } : {}) },
    log: {
      debug: () => {},
      info: () => {},
      warn: (message: string) => log.debug({ github: message }, 'octokit'),
      error: (message: string) => log.debug({ github: message }, 'octokit'),
    },
  });

  // Before every try (the retries' too): the gate, then the token.
  octokit.hook.before('request', async (options) => {
    if (stop.signal.aborted) throw new GitHubError('unavailable', 'grove is stopping');
    const until = limited();
    if (until !== null) throw new GitHubError('rate_limited', `GitHub's rate limit is spent until ${until.toISOString()}`, null, until);
    const read = await deps.token.read();
    if (read.token === null) throw new GitHubError('no_token', read.why);
    options.headers.authorization = `token ${read.token}`;
  });
  const saw = (headers: Record<string, string | number | undefined> | undefined) => {
    if (headers?.['x-ratelimit-remaining'] === '0') spend(Number(headers['x-ratelimit-reset'] ?? 0) * 1000);
  };
  octokit.hook.after('request', (res) => saw(res.headers as Answer['headers']));
  octokit.hook.error('request', (err) => {
    saw((err as { response?: Answer }).response?.headers);
    throw err;
  });

  // A failure as a GitHubError: GitHub's message, never the request (its headers hold the token).
  function failure(err: unknown): GitHubError {
    if (err instanceof GitHubError) return err;
    const e = err as { status?: number; message?: string; response?: Answer };
    const status = typeof e.status === 'number' ? e.status : null;
    const body = e.response?.data as { message?: string; errors?: { message?: string; code?: string; field?: string }[] } | undefined;
    const said = [body?.message, ...(body?.errors ?? []).map((x) => x.message ?? [x.field, x.code].filter(Boolean).join(' '))].filter((x) => typeof x === 'string' && x !== '').join(': ');
    const message = said || (status === 500 && !e.response ? `GitHub could not be reached: ${e.message ?? 'no answer'}` : (e.message ?? 'unknown failure'));
    if (status === 401) {
      deps.token.forget();
      return new GitHubError('unauthorized', `GitHub refused the token: ${message}`, 401);
    }
    const until = limited();
    if ((status === 403 || status === 429) && until !== null) return new GitHubError('rate_limited', `GitHub's rate limit is spent until ${until.toISOString()}`, status, until);
    if (status === 403) return new GitHubError('forbidden', message, 403);
    if (status === 404 || status === 410) return new GitHubError('not_found', message, status);
    if (status === 422 || status === 400) return new GitHubError('invalid', message, status);
    return new GitHubError('unavailable', message, status !== null && status >= 500 && e.response ? status : null);
  }

  async function call(route: string, params: Params): Promise<Answer> {
    try {
      return (await octokit.request(route, params)) as unknown as Answer;
    } catch (err) {
      throw failure(err);
    }
  }

  // A GET that asks "changed since?" with the ETag of its last answer: `changed` false and the
  // kept data when GitHub answers 304.
  async function conditional(route: string, params: Params): Promise<{ data: unknown; changed: boolean; next: string | null }> {
    const key = `${route} ${JSON.stringify(params)}`;
    const before = kept.get(key);
    try {
      const res = (await octokit.request(route, { ...params, headers: before ? { 'if-none-match': before.etag } : {} })) as unknown as Answer;
      const next = nextPage(res.headers.link);
      const etag = res.headers.etag;
      kept.delete(key);
      if (typeof etag === 'string') {
        kept.set(key, { etag, data: res.data, next });
        if (kept.size > KEPT_ANSWERS) kept.delete(kept.keys().next().value!);
      }
      return { data: res.data, changed: true, next };
    } catch (err) {
      if ((err as { status?: number }).status === 304 && before) return { data: before.data, changed: false, next: before.next };
      throw failure(err);
    }
  }

  return {
    apiUrl: deps.apiUrl,
    /** a GET, conditional on its last answer */
    async get<T>(route: string, params: Params = {}): Promise<{ data: T; changed: boolean }> {
      const { data, changed } = await conditional(`GET ${route}`, params);
      return { data: data as T, changed };
    },
    /** every page of a list, each conditional: `changed` when any page was */
    async list<T>(route: string, params: Params = {}): Promise<{ data: T[]; changed: boolean }> {
      const all: T[] = [];
      let changed = false;
      for (let page = 1; page <= MAX_PAGES; page++) {
        const res = await conditional(`GET ${route}`, { ...params, per_page: PER_PAGE, page });
        changed ||= res.changed;
        all.push(...(res.data as T[]));
        if (res.next === null) break;
      }
      return { data: all, changed };
    },
    async send<T>(method: Method, route: string, params: Params = {}): Promise<T> {
      return (await call(`${method} ${route}`, params)).data as T;
    },
    /** while the rate limit is spent: until when */
    limitedUntil: limited,
    /** in-flight requests are cut short; none starts after */
    close: once(async () => {
      stop.abort();
    }),
  };
}

export type GitHub = ReturnType<typeof createGitHub>;

// The `rel="next"` URL of a Link header, null when there is none.
function nextPage(link: string | number | undefined): string | null {
  if (typeof link !== 'string') return null;
  const m = /<([^>]+)>;\s*rel="next"/.exec(link);
  return m ? m[1]! : null;
}
