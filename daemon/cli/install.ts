// node:child_process, not execa: short synchronous systemctl/launchctl calls from the CLI.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../runtime/root.ts';
import { CliError, EXIT } from './errors.ts';


export const UNIT_TEMPLATE = path.join(ROOT, 'systemd', 'grove.service');
export const PLIST_TEMPLATE = path.join(ROOT, 'launchd', 'dev.grove.daemon.plist');
export const LABEL = 'dev.grove.daemon';

export type Platform = 'linux' | 'darwin';

export interface Plan {
  platform: Platform;
  file: string;
  content: string;
  commands: string[][];
}

function xmlEscape(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

// Values go inside double quotes in the unit: escape what systemd would read specially there.
function unitEscape(s: string): string {
  return s.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('%', '%%').replaceAll('$', '$$$$');
}

// The service file for this machine: absolute paths to this node and this grove.
export function render(platform: Platform, env: NodeJS.ProcessEnv = process.env): { file: string; content: string } {
  const home = env.HOME || homedir();
  const values: Record<string, string> = {
    NODE: process.execPath,
    GROVE: path.join(ROOT, 'bin', 'grove.js'),
    PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LOG: path.join(home, 'Library', 'Logs', 'grove.log'),
  };
  const template = readFileSync(platform === 'linux' ? UNIT_TEMPLATE : PLIST_TEMPLATE, 'utf8');
  const escape = platform === 'linux' ? unitEscape : xmlEscape;
  const content = template.replace(/@([A-Z]+)@/g, (_, k: string) => escape(values[k] ?? ''));
  const file =
    platform === 'linux'
      ? path.join(env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config'), 'systemd', 'user', 'grove.service')
      : path.join(home, 'Library', 'LaunchAgents', `${LABEL}.plist`);
  return { file, content };
}

export function installPlan(platform: Platform, env: NodeJS.ProcessEnv = process.env): Plan {
  const { file, content } = render(platform, env);
  const uid = String(process.getuid?.() ?? 0);
  const commands =
    platform === 'linux'
      ? [
          ['systemctl', '--user', 'daemon-reload'],
          ['systemctl', '--user', 'enable', '--now', 'grove.service'],
        ]
      : [['launchctl', 'bootstrap', `gui/${uid}`, file]];
  return { platform, file, content, commands };
}

export function uninstallPlan(platform: Platform, env: NodeJS.ProcessEnv = process.env): Omit<Plan, 'content'> {
  const { file } = render(platform, env);
  const uid = String(process.getuid?.() ?? 0);
  const commands =
    platform === 'linux'
      ? [
          ['systemctl', '--user', 'disable', '--now', 'grove.service'],
          ['systemctl', '--user', 'daemon-reload'],
        ]
      : [['launchctl', 'bootout', `gui/${uid}/${LABEL}`]];
  return { platform, file, commands };
}

// The service manager must answer before anything is written: otherwise nothing changes.
function checkManager(platform: Platform): void {
  const probe = platform === 'linux' ? ['systemctl', '--user', 'show-environment'] : ['launchctl', 'print', `gui/${process.getuid?.() ?? 0}`];
  try {
    execFileSync(probe[0]!, probe.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const why = ((err as { stderr?: Buffer }).stderr?.toString() ?? (err as Error).message).trim().split('\n')[0];
    const what = platform === 'linux' ? 'a running systemd user manager (systemctl --user)' : 'a launchd GUI session';
    throw new CliError(`grove install needs ${what}, and it did not answer: ${why}. Nothing was changed; run \`grove daemon\` in the foreground instead.`, EXIT.API);
  }
}

function run(cmd: string[]): void {
  execFileSync(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
}

export function install(platform: Platform, dryRun: boolean, out: (s: string) => void): Plan {
  const plan = installPlan(platform);
  if (dryRun) {
    out(`would write ${plan.file}:\n${plan.content}`);
    for (const c of plan.commands) out(`would run: ${c.join(' ')}`);
    return plan;
  }
  checkManager(platform);
  mkdirSync(path.dirname(plan.file), { recursive: true });
  writeFileSync(plan.file, plan.content);
  out(`wrote ${plan.file}`);
  for (const c of plan.commands) {
    out(`running: ${c.join(' ')}`);
    run(c);
  }
  return plan;
}

export function uninstall(platform: Platform, dryRun: boolean, out: (s: string) => void): Omit<Plan, 'content'> {
  const plan = uninstallPlan(platform);
  if (dryRun) {
    for (const c of plan.commands.slice(0, 1)) out(`would run: ${c.join(' ')}`);
    out(`would remove ${plan.file}`);
    for (const c of plan.commands.slice(1)) out(`would run: ${c.join(' ')}`);
    return plan;
  }
  checkManager(platform);
  run(plan.commands[0]!);
  if (existsSync(plan.file)) rmSync(plan.file);
  out(`removed ${plan.file}`);
  for (const c of plan.commands.slice(1)) run(c);
  return plan;
}
