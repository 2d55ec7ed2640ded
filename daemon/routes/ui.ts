import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { HostName } from '../../schemas/host.ts';
import { GroveError } from '../errors.ts';
import { route, type Route } from '../http/route.ts';

// What every page and asset of the dashboard is sent with (DESIGN §12): its own origin only, never
// framed, no inline script. Inline style is allowed: the terminal (xterm, DESIGN §21) writes its
// colours and cell sizes into <style> elements and a cell's 24-bit colour into its style attribute,
// and a style can load nothing from elsewhere under default-src 'self'. The WebSocket of a
// terminal is the page's own origin, which 'self' covers (ws: too, in Chromium and Firefox).
export const UI_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};
// An asset's name as Vite writes it: no folder, no leading dot.
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

// GET / and its assets: the dashboard built into `dir` (dist/ui). Not in the OpenAPI document:
// they are a page, not the API.
export function uiRoutes(deps: { dir: string }): Route[] {
  const send = (file: string, cache: string) => async ({ req, res }: { req: { method?: string }; res: import('node:http').ServerResponse }) => {
    let body: Buffer;
    try {
      body = await readFile(path.join(deps.dir, file));
    } catch {
      throw file === 'index.html'
        ? new GroveError('NOT_FOUND', 'the dashboard is not built: run `npm run build` in the grove folder')
        : new GroveError('NOT_FOUND', `no dashboard file ${file}`);
    }
    res.writeHead(200, { ...UI_HEADERS, 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': body.length, 'cache-control': cache });
    res.end(req.method === 'HEAD' ? undefined : body);
    return null;
  };
  const page = { responses: { 200: null }, produces: 'text/html' };
  return [
    route({
      method: 'GET',
      path: '/',
      summary: 'The dashboard',
      // `?host=NAME`: the page shows that saved SSH host (DESIGN §14.1), and a reload stays there.
      query: Type.Object({ host: Type.Optional(HostName) }, { additionalProperties: false }),
      ...page,
      handler: send('index.html', 'no-cache'),
    }),
    route({ method: 'GET', path: '/favicon.svg', summary: "The dashboard's icon", ...page, handler: send('favicon.svg', 'max-age=86400') }),
    route({
      method: 'GET',
      path: '/assets/:file',
      summary: "The dashboard's scripts and styles, by content hash",
      params: Type.Object({ file: Type.String() }),
      ...page,
      handler: async (ctx) => {
        const file = (ctx.params as { file: string }).file;
        // Hashed names never change content: cached for good.
        if (!ASSET_NAME.test(file)) throw new GroveError('NOT_FOUND', `no dashboard file ${file}`);
        return send(path.join('assets', file), 'public, max-age=31536000, immutable')(ctx);
      },
    }),
  ];
}
