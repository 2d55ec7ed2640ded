import path from 'node:path';
import type { SandboxSetting } from '../../schemas/config.ts';
import type { ProjectConfig, ProjectSandbox } from '../../schemas/project-config.ts';
import { parseNetworkEntry, type NetEntry } from './allow.ts';

// `.grove.json` `sandbox` (DESIGN §18) as its object form: the setting alone is `enabled`.
export function projectSandbox(config: ProjectConfig): ProjectSandbox {
  const s = config.sandbox;
  if (s === undefined) return {};
  return typeof s === 'object' ? s : { enabled: s };
}

// The setting in force and where it was set: the request's, else the project's, else the user's.
export function settingOf(asked: SandboxSetting | null, config: ProjectConfig, user: SandboxSetting | undefined): { setting: SandboxSetting; from: string } {
  if (asked !== null) return { setting: asked, from: 'by the request' };
  const project = projectSandbox(config).enabled;
  if (project !== undefined) return { setting: project, from: "by the project's .grove.json" };
  if (user !== undefined) return { setting: user, from: 'by the user config' };
  return { setting: 'auto', from: 'by default' };
}

// A path of `.grove.json` `sandbox`: `~/…` is the user's, a relative one the project's.
export function sandboxPath(p: string, projectPath: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return path.resolve(projectPath, p);
}

// Whether `p` is `root` or below it.
export function isWithin(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

// What the schema cannot say of `.grove.json` `sandbox`: a `write` path must be inside the project
// or under ~, a `network` entry a host, `*.host`, `host:port` or an IP (DESIGN §18). JSON paths as
// Ajv's issues give them.
export function sandboxIssues(config: ProjectConfig, projectPath: string, home: string): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  for (const [i, p] of (projectSandbox(config).write ?? []).entries()) {
    const abs = sandboxPath(p, projectPath, home);
    if (!isWithin(abs, projectPath) && !isWithin(abs, home)) out.push({ path: `/sandbox/write/${i}`, message: `is ${abs}, neither inside the project nor under ~` });
  }
  for (const [i, e] of (projectSandbox(config).network ?? []).entries()) {
    if (parseNetworkEntry(e) === null) out.push({ path: `/sandbox/network/${i}`, message: 'is not a host, *.host, host:port or an IP (a loopback host needs its port)' });
  }
  return out;
}

// The host and port of each base URL in an agent's environment (`ANTHROPIC_BASE_URL`,
// `OPENAI_BASE_URL`, …: a variable named `*_BASE_URL` or `*_API_BASE` holding an http(s) URL),
// which its confined session may reach (DESIGN §18), loopback included.
export function baseUrlEntries(env: Record<string, string>): NetEntry[] {
  const out: NetEntry[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!/_BASE_URL$|_API_BASE$/.test(name)) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
    const e = parseNetworkEntry(`${url.hostname}:${port}`);
    if (e !== null) out.push(e);
  }
  return out;
}
