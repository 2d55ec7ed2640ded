import path from 'node:path';
import { NETWORK_TOOL, networkTarget } from '../../schemas/denials.ts';

// Claude Code's permission rules (DESIGN §15), over tool names as Claude Code gives them:
//   `Bash`, `Bash(*)`         every command line
//   `Bash(git status)`        that exact command
//   `Bash(npm test *)`        `*` any text, anywhere (`Bash(git * main)`); `Bash(npm test:*)` is `Bash(npm test *)`
//                             each simple command of a line allowed on its own (read-only ones need no rule)
//   `Edit`, `Read`, `Write`   every use; `Edit(src/**)` files under the worktree matching the glob
//   `WebFetch(domain:docs.rs)` that host (`*.docs.rs`: its subdomains)
//   `mcp__server`, `mcp__server__*`, `mcp__server__tool`
//   `Network(host:port)`      a connection the sandbox holds to that host and port (a grove
//                             addition, DESIGN §18; `[::1]:443` for IPv6); `Network` every one
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

// ---- Bash: a command line as Claude Code reads it for its rules (docs/decisions/approvals.md).
// A line is split at `&&`, `||`, `;`, `|`, `|&`, `&` and newlines into simple commands, each
// allowed on its own: by a rule, or as one of Claude Code's read-only commands. Shell that grove
// does not fully read (substitutions, subshells, groups, here-docs, variable assignments, shell
// keywords, an operator with nothing after it) is never allowed by a rule: it is asked about.

interface Word {
  raw: string; // as written, quotes included (what a rule is compared with)
  value: string; // after quote removal (what a file argument names)
  glob: boolean; // an unquoted `*`, `?` or `[`: the shell may expand it to anything
  dynamic: boolean; // a `$` expansion or a leading `~`: its value is not what is written
}

interface Redirect {
  write: boolean;
  target: Word | null; // null: a file-descriptor form (`2>&1`, `<&3`, `>&-`) or a here-string
}

interface Simple {
  words: Word[];
  redirects: Redirect[];
}

const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'select', 'function', 'time', 'coproc', '[[', ']]', '!', '{', '}']);

// The simple commands of a line, or null where grove cannot be sure what the line runs.
export function splitCommand(line: string): Simple[] | null {
  const out: Simple[] = [];
  let words: Word[] = [];
  let redirects: Redirect[] = [];
  let word: Word | null = null;
  let pending: { write: boolean; fd: boolean; text?: boolean } | null = null; // a redirection waiting for its target
  let afterOperator: string | null = null; // the separator just read, while no command follows it
  const finishWord = (): boolean => {
    if (word === null) return true;
    const w = word;
    word = null;
    if (pending !== null) {
      const p = pending;
      pending = null;
      if (p.text) redirects.push({ write: false, target: null });
      else if (p.fd) {
        // `>&2`, `<&0`, `>&-`: another descriptor, no file; `>& file` writes that file.
        if (/^(?:\d+|-)$/.test(w.raw)) redirects.push({ write: p.write, target: null });
        else if (p.write) redirects.push({ write: true, target: w });
        else return false;
      } else redirects.push({ write: p.write, target: w });
      return true;
    }
    words.push(w);
    return true;
  };
  const finishCommand = (separator: string): boolean => {
    if (!finishWord() || pending !== null) return false;
    if (words.length === 0) {
      // Nothing before a separator: only a line's start or end, or after `;`, `&` and newlines.
      if (redirects.length > 0) return false;
      if (separator === '&&' || separator === '||' || separator === '|' || separator === '|&') return false;
      if (afterOperator !== null && afterOperator !== ';' && afterOperator !== '&' && afterOperator !== '\n') return false;
      afterOperator = separator;
      return true;
    }
    out.push({ words, redirects });
    words = [];
    redirects = [];
    afterOperator = separator;
    return true;
  };
  const chars = (): Word => (word ??= { raw: '', value: '', glob: false, dynamic: false });

  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    const next = line[i + 1];
    if (c === ' ' || c === '\t') {
      if (!finishWord()) return null;
    } else if (c === '\n' || c === '\r') {
      if (!finishCommand('\n')) return null;
    } else if (c === '#' && word === null) {
      while (i + 1 < line.length && line[i + 1] !== '\n') i++;
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) return null;
      const w = chars();
      w.raw += line.slice(i, close + 1);
      w.value += line.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      const w = chars();
      let j = i + 1;
      let value = '';
      for (; j < line.length && line[j] !== '"'; j++) {
        const d = line[j]!;
        if (d === '`') return null;
        if (d === '$') {
          if (line[j + 1] === '(' || line[j + 1] === '{' || line[j + 1] === '[') return null;
          w.dynamic = true;
        }
        if (d === '\\') {
          j++;
          if (j >= line.length) return null;
        }
        value += line[j];
      }
      if (j >= line.length) return null;
      w.raw += line.slice(i, j + 1);
      w.value += value;
      i = j;
    } else if (c === '\\') {
      if (next === undefined) return null;
      if (next === '\n') {
        i++;
        continue;
      }
      const w = chars();
      w.raw += c + next;
      w.value += next;
      i++;
    } else if (c === '`' || c === '(' || c === ')' || c === '{' || c === '}') {
      return null;
    } else if (c === '$') {
      if (next === '(' || next === '{' || next === '[' || next === "'" || next === '"') return null;
      const w = chars();
      w.raw += c;
      w.value += c;
      w.dynamic = true;
    } else if (c === ';') {
      if (next === ';' || next === '&') return null;
      if (!finishCommand(';')) return null;
    } else if (c === '&' && next === '&') {
      if (!finishCommand('&&')) return null;
      i++;
    } else if (c === '|' && next === '|') {
      if (!finishCommand('||')) return null;
      i++;
    } else if (c === '|') {
      if (!finishCommand(next === '&' ? '|&' : '|')) return null;
      if (next === '&') i++;
    } else if (c === '&' && next === '>') {
      // `&> file`, `&>> file`: both outputs to a file.
      if (!finishWord() || pending !== null) return null;
      pending = { write: true, fd: false };
      i += line[i + 2] === '>' ? 2 : 1;
    } else if (c === '&') {
      if (!finishCommand('&')) return null;
    } else if (c === '<' || c === '>') {
      // A descriptor number written just before it belongs to the redirection.
      if (word !== null && !/^\d+$/.test((word as Word).raw)) {
        if (!finishWord()) return null;
      }
      word = null;
      if (pending !== null) return null;
      if (c === '<' && next === '<') {
        if (line[i + 2] !== '<') return null; // a here-doc: its body is more lines
        // A here-string: its word is the command's input, not a file.
        pending = { write: false, fd: false, text: true };
        i += 2;
        continue;
      }
      if (c === '<' && next === '(') return null;
      if (c === '>' && next === '(') return null;
      const write = c === '>' || next === '>';
      if (next === '&') {
        pending = { write, fd: true };
        i++;
      } else {
        pending = { write, fd: false };
        if (next === '>' || next === '|') i++;
      }
    } else {
      const w = chars();
      if (c === '*' || c === '?' || c === '[') w.glob = true;
      if (c === '~' && w.raw === '') w.dynamic = true;
      w.raw += c;
      w.value += c;
    }
  }
  // (an operator with nothing after it, such as `npm test &&`, fails here)
  if (!finishCommand('\n')) return null;
  for (const s of out) {
    // An assignment before the command, or a shell keyword: not a command a rule can name.
    if (/^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/.test(s.words[0]!.raw) || RESERVED.has(s.words[0]!.raw)) return null;
  }
  return out;
}

// A Bash rule's specifier against one simple command's text: `*` stands for any text (`\*` is a
// star), a trailing ` *` that is the rule's only wildcard also matches the bare command, and a
// trailing `:*` is the same as ` *`; without a `*` the text must be the same.
function bashPattern(spec: string): RegExp {
  const s = spec.endsWith(':*') ? `${spec.slice(0, -2)} *` : spec;
  const parts: string[] = [];
  let part = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && (s[i + 1] === '*' || s[i + 1] === '\\')) part += s[++i];
    else if (c === '*') {
      parts.push(part);
      part = '';
    } else part += c;
  }
  parts.push(part);
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (parts.length === 2 && parts[0]!.endsWith(' ') && parts[1] === '') return new RegExp(`^${esc(parts[0]!.slice(0, -1))}(?: .*)?$`, 's');
  return new RegExp(`^${parts.map(esc).join('.*')}$`, 's');
}

// Folders where a write always asks in Claude Code, whatever allows it (its protected paths).
const PROTECTED = ['.git', '.claude', '.vscode', '.idea', '.husky', '.cargo', '.devcontainer', '.yarn', '.mvn'];

// Whether a file a command line writes or reads is one grove can name: literal, inside the
// worktree, and (written) outside the protected folders. After a `cd` a relative name is not.
function targetInside(w: Word, cwd: string, write: boolean, movedDir: boolean): boolean {
  if (w.value === '/dev/null') return true;
  if (w.glob || w.dynamic || w.value === '') return false;
  if (movedDir && !path.isAbsolute(w.value)) return false;
  const rel = path.relative(cwd, path.resolve(cwd, w.value));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
  if (!write) return true;
  const parts = rel.split(path.sep);
  if (parts[0] === '.claude' && parts[1] === 'worktrees') return true;
  return !parts.some((p, i) => PROTECTED.includes(p) || (p === '.config' && parts[i + 1] === 'git'));
}

// Where a `cd` goes, when it is a literal folder in the worktree (the worktree itself included).
function cdTarget(w: Word, cwd: string): string | null {
  if (w.glob || w.dynamic || w.value === '' || w.value === '-') return null;
  const to = path.resolve(cwd, w.value);
  const rel = path.relative(cwd, to);
  return rel.startsWith('..') || path.isAbsolute(rel) ? null : to;
}

// Claude Code's built-in read-only commands (its documented set), in the forms that only read.
const READ_ONLY = new Set(['ls', 'cat', 'echo', 'pwd', 'head', 'tail', 'grep', 'wc', 'which', 'diff', 'stat', 'du']);
const GIT_READ_ONLY = new Set(['status', 'log', 'diff', 'show', 'blame', 'ls-files', 'rev-parse', 'describe']);
const FIND_ACTS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);

function readOnly(s: Simple, cwd: string): boolean {
  const [cmd, ...args] = s.words;
  const name = cmd!.raw;
  if (READ_ONLY.has(name)) return true;
  const globbed = args.some((a) => a.glob);
  if (name === 'find') return !globbed && !args.some((a) => FIND_ACTS.has(a.value));
  if (name === 'git') return !globbed && GIT_READ_ONLY.has(args[0]?.raw ?? '') && !args.some((a) => /^--(?:output|ext-diff|textconv)/.test(a.value));
  if (name === 'cd') return args.length === 1 && cdTarget(args[0]!, cwd) !== null;
  return false;
}

// The rules that allow a whole command line, each simple command on its own (read-only ones
// need none), or null. At least one rule must take part: a call made of read-only commands only
// is one Claude Code never asks about, so another agent asking for it wants more than reading.
function bashAllowedBy(rules: readonly string[], command: string, cwd: string): string[] | null {
  const commands = splitCommand(command);
  if (commands === null || commands.length === 0) return null;
  const bashSpecs = rules.flatMap((r) => {
    const p = parseRule(r);
    return p && p.tool === 'Bash' && p.specifier !== null ? [{ rule: r, re: bashPattern(p.specifier) }] : [];
  });
  const used = new Set<string>();
  // Claude Code asks for `cd` to another folder with `git` in one line: git would run that
  // folder's hooks.
  const moves = commands.some((s) => s.words[0]!.raw === 'cd' && (s.words.length !== 2 || cdTarget(s.words[1]!, cwd) !== path.resolve(cwd)));
  if (moves && commands.some((s) => s.words[0]!.raw === 'git')) return null;
  let movedDir = false;
  for (const s of commands) {
    const text = s.words.map((w) => w.raw).join(' ');
    const byRule = bashSpecs.find((b) => b.re.test(text));
    const writes = s.redirects.filter((r) => r.write && r.target !== null && r.target.value !== '/dev/null');
    for (const r of s.redirects) {
      if (r.target !== null && !targetInside(r.target, cwd, r.write, movedDir)) return null;
    }
    // tee writes the files it names, as a redirection does.
    if (s.words[0]!.raw === 'tee' && !s.words.slice(1).filter((w) => !w.value.startsWith('-')).every((w) => targetInside(w, cwd, true, movedDir))) return null;
    if (byRule) used.add(byRule.rule);
    else if (readOnly(s, cwd)) {
      // A read-only command that writes a file is not read-only: an Edit rule must cover the file.
      for (const r of writes) {
        const edit = rules.find((rule) => ruleMatches(rule, { tool: 'Edit', input: { file_path: r.target!.value } }, cwd));
        if (edit === undefined) return null;
        used.add(edit);
      }
    } else return null;
    if (s.words[0]!.raw === 'cd') movedDir = true;
  }
  return used.size > 0 ? [...used] : null;
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
    if (command === null) return false;
    // `Bash(*)` is `Bash`; a rule that is the whole line as written allows that line (what
    // `remember` keeps); otherwise each simple command of the line must match it.
    return specifier === '*' || command.trim() === specifier.trim() || bashAllowedBy([rule], command, cwd) !== null;
  }
  if (tool === 'WebFetch') {
    const url = field(call.input, 'url');
    return url !== null && domainMatches(specifier, url);
  }
  if (tool === NETWORK_TOOL) return networkTarget(call.input) === specifier.trim().toLowerCase();
  if (FAMILIES[tool] || tool === 'Write') {
    const file = field(call.input, 'file_path') ?? field(call.input, 'notebook_path') ?? field(call.input, 'path');
    return file !== null && fileMatches(specifier, file, cwd);
  }
  return false;
}

// The rule that allows the call, or null; a command line whose simple commands are allowed by
// several rules together names them all.
export function firstMatch(rules: readonly string[], call: ToolCall, cwd: string): string | null {
  const one = rules.find((r) => ruleMatches(r, call, cwd));
  if (one !== undefined) return one;
  const command = call.tool === 'Bash' ? field(call.input, 'command') : null;
  return command === null ? null : (bashAllowedBy(rules, command, cwd)?.join(', ') ?? null);
}

// The rule a `remember` keeps for a call allowed once: that exact command, that host (and port,
// for a connection), or the tool (Claude Code's "allow all edits during this session").
export function ruleFor(call: ToolCall): string {
  const target = call.tool === NETWORK_TOOL ? networkTarget(call.input) : null;
  if (target !== null) return `${NETWORK_TOOL}(${target})`;
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
