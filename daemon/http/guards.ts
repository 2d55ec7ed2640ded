import type { IncomingMessage } from 'node:http';
import type { ErrorCode } from '../errors.ts';

export interface Refusal {
  code: ErrorCode;
  detail: string;
}

// Browser guards of the TCP front (DESIGN §6); runs before anything is forwarded.
export function checkBrowserGuards(req: IncomingMessage, port: number): Refusal | null {
  const target = req.url ?? '';
  if (!target.startsWith('/')) {
    return { code: 'FORBIDDEN_HOST', detail: 'absolute-form and asterisk request targets are not accepted' };
  }

  const hosts = headerValues(req, 'host');
  const allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (hosts.length !== 1 || !allowedHosts.includes(hosts[0]!.toLowerCase())) {
    // Stops DNS rebinding: a page on evil.example resolved to 127.0.0.1 still says evil.example.
    const shown = hosts.length === 0 ? 'no Host header' : `Host ${JSON.stringify(hosts.join(', '))}`;
    return { code: 'FORBIDDEN_HOST', detail: `${shown} is not allowed; use ${allowedHosts.slice(0, 2).join(' or ')}` };
  }

  const origins = headerValues(req, 'origin');
  const allowedOrigins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
  if (origins.length > 1 || (origins.length === 1 && !allowedOrigins.includes(origins[0]!.toLowerCase()))) {
    return { code: 'FORBIDDEN_ORIGIN', detail: `Origin ${JSON.stringify(origins.join(', '))} is not allowed` };
  }

  // A page on another port of this machine is `same-site`; only our own origin or no page at all pass.
  const site = headerValues(req, 'sec-fetch-site');
  if (site.some((s) => s.toLowerCase() !== 'same-origin' && s.toLowerCase() !== 'none')) {
    return { code: 'FORBIDDEN_ORIGIN', detail: `Sec-Fetch-Site ${JSON.stringify(site.join(', '))} is not allowed` };
  }
  return null;
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const out: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!.trim());
  }
  return out;
}
