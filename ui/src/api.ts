// Calls to the daemon's API from the page: same origin, JSON in and out, problems as errors.
// The dashboard's types are the daemon's schemas' (DESIGN §12): schemas/ exports each one.
import type { Problem } from '../../schemas/common.ts';

// A problem+json answer (DESIGN §4), thrown: forms show `errors` at their fields.
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }
  get code(): string {
    return this.problem.code;
  }
  // The message for a field, from the problem's JSON pointers (`/name`), if any.
  at(field: string): string | undefined {
    return this.problem.errors?.find((e) => e.path === `/${field}` || e.path.startsWith(`/${field}/`))?.message;
  }
}

// The saved SSH host the page shows (DESIGN §14.1), from the address's `?host=NAME`; null for
// this machine. Read once: choosing another host loads the page anew, with nothing of this one's.
export const HOST: string | null = new URLSearchParams(location.search).get('host') || null;

// The one place that says where the page's API is: this daemon's own, or the chosen host's as
// this daemon forwards it. Every call and every event stream of the page goes through it.
export function apiUrl(path: string): string {
  return HOST === null ? path : `/api/hosts/${encodeURIComponent(HOST)}${path}`;
}

// The address of the page for a host (null: this machine), on its board.
export function hostHref(name: string | null): string {
  return name === null ? '/#/' : `/?host=${encodeURIComponent(name)}#/`;
}

// One request's body as text; a problem answer (or a network failure) throws an ApiError.
export function apiText(method: string, path: string, body?: unknown): Promise<string> {
  return request(method, apiUrl(path), body);
}

// A request to this machine's daemon whichever host the page shows: the saved hosts it knows.
export async function localApi<T>(method: string, path: string): Promise<T> {
  return JSON.parse(await request(method, path)) as T;
}

async function request(method: string, url: string, body?: unknown): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiError({ type: 'about:blank', title: 'The daemon cannot be reached', status: 0, code: 'UNREACHABLE', detail: String(err) });
  }
  const text = await res.text();
  if (!res.ok) {
    let problem: Problem;
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      problem = { type: 'about:blank', title: res.statusText, status: res.status, code: 'HTTP_' + res.status, detail: text.slice(0, 500) };
    }
    throw new ApiError(problem);
  }
  return text;
}

// One JSON request; a problem answer (or a network failure) throws an ApiError.
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const text = await apiText(method, path, body);
  return (text ? JSON.parse(text) : undefined) as T;
}

// The message to show for an error of any kind.
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return `${err.problem.detail || err.problem.title} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}
