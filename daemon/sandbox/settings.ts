import path from 'node:path';
import type { SandboxSetting } from '../../schemas/config.ts';
import type { ProjectConfig, ProjectSandbox } from '../../schemas/project-config.ts';

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
// or under ~ (DESIGN §18). JSON paths as Ajv's issues give them.
export function sandboxIssues(config: ProjectConfig, projectPath: string, home: string): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  for (const [i, p] of (projectSandbox(config).write ?? []).entries()) {
    const abs = sandboxPath(p, projectPath, home);
    if (!isWithin(abs, projectPath) && !isWithin(abs, home)) out.push({ path: `/sandbox/write/${i}`, message: `is ${abs}, neither inside the project nor under ~` });
  }
  return out;
}
