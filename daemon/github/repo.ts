// Where a repository lives on GitHub (DESIGN §20): `owner/name` as the API names it, read from a
// project's origin or an issue's URL, against the API in use (github.com, or an Enterprise host).

export const DEFAULT_API_URL = 'https://api.github.com';
export const REPOSITORY_PATTERN = '^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$';
const REPOSITORY = new RegExp(REPOSITORY_PATTERN);

// The web host (with its port, when it has one) whose pages and clones go with an API: github.com
// for api.github.com; an Enterprise server (https://HOST/api/v3) serves both on one host.
export function webHost(apiUrl: string): string {
  const { host } = new URL(apiUrl);
  return host === 'api.github.com' ? 'github.com' : host;
}

// `owner/name` of a project's repository as normaliseOrigin names it (`host/owner/name`), when it is
// on the API's host; null for another host or a local origin.
export function repositoryOf(normalised: string | null, apiUrl: string): string | null {
  if (normalised === null) return null;
  const host = webHost(apiUrl).replace(/:\d+$/, '').toLowerCase();
  if (!normalised.startsWith(`${host}/`)) return null;
  const rest = normalised.slice(host.length + 1);
  return REPOSITORY.test(rest) ? rest : null;
}

export const isRepository = (s: string) => REPOSITORY.test(s);

// The repository and number of an issue's (or pull request's) page on the API's host, null when
// the URL is not one.
export function parseIssueUrl(url: string, apiUrl: string): { repository: string; number: number } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(u.protocol) || u.host.toLowerCase() !== webHost(apiUrl).toLowerCase()) return null;
  const m = /^\/([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.-]{1,100})\/(?:issues|pull)\/([1-9]\d{0,9})\/?$/.exec(u.pathname);
  if (!m) return null;
  return { repository: `${m[1]}/${m[2]}`, number: Number(m[3]) };
}
