// Calls an agent denied by itself (DESIGN §15, "No silent denials") in words, the same in the CLI,
// MCP and the dashboard. Without TypeBox: the dashboard imports it, like session-status.ts.
import type { Denial } from './session.ts';

// The input field that says what a call does, for Claude Code's tools (Bash, Write and Edit,
// NotebookEdit, Glob and Grep, WebFetch, WebSearch, Task); any other input is shown as JSON.
const SAYS = ['command', 'file_path', 'notebook_path', 'path', 'url', 'pattern', 'query', 'prompt'];

// The tool name of every `network` approval (DESIGN §18), and of the rules that allow one.
export const NETWORK_TOOL = 'Network';

// Where a `network` approval's connection goes (its input `{host, port}`), as `host:port`, the
// host lowercased, without a trailing dot, and bracketed when it is an IPv6 address; null for any
// other input. The same words name the target and the rule that allows it: `Network(host:port)`.
export function networkTarget(input: unknown): string | null {
  if (input === null || typeof input !== 'object') return null;
  const { host, port } = input as Record<string, unknown>;
  if (typeof host !== 'string' || typeof port !== 'number') return null;
  const h = host.toLowerCase().replace(/\.$/, '');
  return `${h.includes(':') ? `[${h}]` : h}:${port}`;
}

// One denied call on one line: the tool, then what it would have done, cut at `max` characters.
export function describeDenial(d: Denial, max = Infinity): string {
  const input = d.input ?? {};
  const field = SAYS.find((k) => typeof input[k] === 'string');
  const what = (d.tool === NETWORK_TOOL ? networkTarget(input) : null) ?? (field ? (input[field] as string) : JSON.stringify(input));
  const text = `${d.tool} ${what}`.replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;
}

// "1 call denied", "2 calls denied".
export function deniedCount(n: number): string {
  return `${n} call${n === 1 ? '' : 's'} denied`;
}

// "2 calls denied: Bash npm test; Write a.txt", or null when there were none. `denials` may be
// missing in an event recorded before results had it.
export function denialSummary(denials: readonly Denial[] | undefined, max?: number): string | null {
  if (!denials || denials.length === 0) return null;
  return `${deniedCount(denials.length)}: ${denials.map((d) => describeDenial(d, max)).join('; ')}`;
}
