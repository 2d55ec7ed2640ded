import path from 'node:path';

// Claude Code's permission rules (DESIGN §15), over tool names as Claude Code gives them:
//   `Bash`                    every command
//   `Bash(git status)`        that exact command
//   `Bash(npm test:*)`        `npm test` and `npm test <anything>`, one simple command
//   `Edit`, `Read`, `Write`   every use; `Edit(src/**)` files under the worktree matching the glob
//   `WebFetch(domain:docs.rs)` that host (`*.docs.rs`: its subdomains)
//   `mcp__server`, `mcp__server__*`, `mcp__server__tool`
// A rule that grove does not understand matches nothing: a misread rule must never allow.

export interface ToolCall {
  tool: string;
  input: unknown;
}

// Claude Code's `Edit` rules cover every tool that edits a file, its `Read` rules every tool that reads.
const FAMILIES: Record<string, readonly string[]> = {
  Edit: ['Edit', 'MultiEdit', 'Write', 'NotebookEdit'],
  Read: ['Read', 'Grep', 'Glob', 'LS', 'NotebookRead'],
};

const RULE = /^([A-Za-z0-9_.*-]+)(?:\((.*)\))?$/s;

export interface ParsedRule {
  tool: string;
  specifier: string | null;
}

export function parseRule(rule: string): ParsedRule | null {
  const m = RULE.exec(rule);
  if (!m) return null;
  return { tool: m[1]!, specifier: m[2] === undefined || m[2] === '' ? null : m[2] };
}

const field = (input: unknown, name: string): string | null => {
  if (input === null || typeof input !== 'object') return null;
  const v = (input as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : null;
};

// Anything that makes one command line run more than one command, or write where it was not
// asked to: a prefix rule only allows a single simple command.
const SHELL_OPERATORS = /[;&|`<>\n\r]|\$\(/;

function bashMatches(spec: string, command: string): boolean {
  if (spec.endsWith(':*')) {
    const prefix = spec.slice(0, -2);
    if (SHELL_OPERATORS.test(command)) return false;
    const cmd = command.trim();
    return cmd === prefix || cmd.startsWith(`${prefix} `);
  }
  return command.trim() === spec.trim();
}

// A gitignore-like glob as a regular expression: `**` any folders, `*` and `?` within one name.
function globRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

// A file rule's glob is relative to the worktree (a leading `/` or `./` too); a file outside the
// worktree never matches one.
function fileMatches(spec: string, filePath: string, cwd: string): boolean {
  const abs = path.resolve(cwd, filePath);
  const rel = path.relative(cwd, abs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
  const glob = spec.replace(/^\.?\//, '');
  return globRegex(glob).test(rel.split(path.sep).join('/')) || globRegex(`${glob}/**`).test(rel);
}

function domainMatches(spec: string, url: string): boolean {
  if (!spec.startsWith('domain:')) return false;
  const domain = spec.slice('domain:'.length).toLowerCase();
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (domain.startsWith('*.')) return host.endsWith(domain.slice(1));
  return host === domain;
}

// Whether one rule allows a call made in the worktree `cwd`.
export function ruleMatches(rule: string, call: ToolCall, cwd: string): boolean {
  const parsed = parseRule(rule);
  if (!parsed) return false;
  const { tool, specifier } = parsed;
  if (tool.startsWith('mcp__')) {
    if (specifier !== null) return false;
    const server = tool.endsWith('__*') ? tool.slice(0, -3) : tool;
    return call.tool === tool || call.tool.startsWith(`${server}__`);
  }
  const family = FAMILIES[tool] ?? [tool];
  if (!family.includes(call.tool)) return false;
  if (specifier === null) return true;
  if (tool === 'Bash') {
    const command = field(call.input, 'command');
    return command !== null && bashMatches(specifier, command);
  }
  if (tool === 'WebFetch') {
    const url = field(call.input, 'url');
    return url !== null && domainMatches(specifier, url);
  }
  if (FAMILIES[tool] || tool === 'Write') {
    const file = field(call.input, 'file_path') ?? field(call.input, 'notebook_path') ?? field(call.input, 'path');
    return file !== null && fileMatches(specifier, file, cwd);
  }
  return false;
}

// The first rule that allows the call, or null.
export function firstMatch(rules: readonly string[], call: ToolCall, cwd: string): string | null {
  return rules.find((r) => ruleMatches(r, call, cwd)) ?? null;
}

// The rule a `remember` keeps for a call allowed once: that exact command, that host, or the
// tool (Claude Code's "allow all edits during this session").
export function ruleFor(call: ToolCall): string {
  if (call.tool === 'Bash') {
    const command = field(call.input, 'command');
    if (command !== null) return `Bash(${command.trim()})`;
  }
  if (call.tool === 'WebFetch') {
    const url = field(call.input, 'url');
    try {
      if (url !== null) return `WebFetch(domain:${new URL(url).hostname.toLowerCase()})`;
    } catch {
      // an unreadable URL: the tool itself
    }
  }
  return call.tool;
}
