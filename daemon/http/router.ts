import type { Method, Route } from './route.ts';

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

interface Compiled {
  route: Route;
  segments: string[];
}

// By code unit, not localeCompare: the same order in every locale.
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// The route table, sorted and checked once at start; matching is by path segments.
export function createRouter(routes: Route[]) {
  const table: Compiled[] = [...routes]
    .sort((a, b) => byCodeUnit(a.path, b.path) || byCodeUnit(a.method, b.method))
    .map((route) => ({ route, segments: route.path.split('/').slice(1) }));

  const seen = new Set<string>();
  for (const { route } of table) {
    const key = `${route.method} ${route.path.replace(/:[a-z_]+/g, ':')}`;
    if (seen.has(key)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    seen.add(key);
  }

  function matchPath(segments: string[], parts: string[]): Record<string, string> | null {
    if (segments.length !== parts.length) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!;
      const part = parts[i]!;
      if (seg.startsWith(':')) {
        if (part === '') return null;
        params[seg.slice(1)] = part;
      } else if (seg !== part) return null;
    }
    return params;
  }

  return {
    routes: table.map((c) => c.route),
    match(method: string, pathname: string): Match {
      const parts = pathname.split('/').slice(1);
      const lookup = method === 'HEAD' ? 'GET' : (method as Method);
      const allow = new Set<string>();
      // Literal segments win over parameters: try exact routes first.
      let found: { route: Route; params: Record<string, string> } | null = null;
      for (const c of table) {
        const params = matchPath(c.segments, parts);
        if (!params) continue;
        allow.add(c.route.method);
        if (c.route.method === 'GET') allow.add('HEAD');
        if (c.route.method === lookup) {
          const literal = Object.keys(params).length === 0;
          if (!found || literal) found = { route: c.route, params };
        }
      }
      if (found) return { kind: 'found', ...found };
      if (allow.size > 0) return { kind: 'method', allow: [...allow].sort() };
      return { kind: 'none' };
    },
  };
}

export type Router = ReturnType<typeof createRouter>;
