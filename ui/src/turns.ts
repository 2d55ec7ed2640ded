// An agent's structured output (one JSON object per stdout line) as readable items: its messages,
// its tool calls and their results (the final result is the session's own `result`). Lines that are not such JSON stay raw.
import type { OutputLine } from '../../schemas/output.ts';

export interface Item {
  kind: 'text' | 'tool' | 'tool-result' | 'result' | 'raw';
  title?: string;
  text: string;
  seq: number;
}

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v, null, 2));

// The items of one line; none for bookkeeping lines (init, usage, deltas).
export function itemsOf(line: OutputLine): Item[] {
  const { seq } = line;
  if (line.stream === 'stderr' || !line.text.startsWith('{')) return [{ kind: 'raw', text: line.text, seq }];
  let j: Json;
  try {
    j = JSON.parse(line.text) as Json;
  } catch {
    return [{ kind: 'raw', text: line.text, seq }];
  }
  const type = j.type;
  // Claude Code (and Amp, Cursor): assistant and user messages with content blocks.
  if ((type === 'assistant' || type === 'user') && j.message && typeof j.message === 'object') {
    const content = (j.message as Json).content;
    const blocks = Array.isArray(content) ? (content as Json[]) : [{ type: 'text', text: content }];
    return blocks.flatMap((b): Item[] => {
      if (b.type === 'text' && type === 'assistant') return [{ kind: 'text', text: str(b.text), seq }];
      if (b.type === 'tool_use') return [{ kind: 'tool', title: str(b.name), text: str(b.input), seq }];
      if (b.type === 'tool_result') return [{ kind: 'tool-result', text: Array.isArray(b.content) ? (b.content as Json[]).map((c) => str(c.text)).join('\n') : str(b.content), seq }];
      return [];
    });
  }
  // The final result is the session's `result` (the daemon reads it from this line), shown
  // under the turn once for every agent: not a second time here.
  if (type === 'result') return [];
  // Codex: items completed.
  if (type === 'item.completed' && j.item && typeof j.item === 'object') {
    const item = j.item as Json;
    if (item.type === 'agent_message' || item.type === 'reasoning') return [{ kind: 'text', text: str(item.text), seq }];
    if (item.type === 'command_execution') return [{ kind: 'tool', title: 'command', text: `${str(item.command)}\n${str(item.aggregated_output)}`.trim(), seq }];
    return [{ kind: 'tool', title: str(item.type), text: str(item), seq }];
  }
  // Codex's rollout (a terminal session's transcript): the model's messages, calls and outputs.
  if (type === 'response_item' && j.payload && typeof j.payload === 'object') {
    const p = j.payload as Json;
    if (p.type === 'message' && p.role === 'assistant' && Array.isArray(p.content)) return [{ kind: 'text', text: (p.content as Json[]).map((c) => str(c.text)).join(''), seq }];
    if (p.type === 'function_call') return [{ kind: 'tool', title: str(p.name), text: str(p.arguments), seq }];
    if (p.type === 'function_call_output') return [{ kind: 'tool-result', text: str(p.output), seq }];
    return [];
  }
  // Gemini CLI: messages, tool calls and results.
  if (type === 'message' && j.role === 'assistant') return [{ kind: 'text', text: str(j.content), seq }];
  if (type === 'tool_use') return [{ kind: 'tool', title: str(j.tool_name), text: str(j.parameters), seq }];
  if (type === 'tool_result') return [{ kind: 'tool-result', text: str(j.output ?? j.error), seq }];
  // OpenCode: text parts.
  if (type === 'text' && j.part && typeof j.part === 'object') return [{ kind: 'text', text: str((j.part as Json).text), seq }];
  if (type === 'error') return [{ kind: 'result', title: 'error', text: str(j.error ?? j.message), seq }];
  return [];
}

// Whether the output reads as structured: its first stdout line is a JSON object.
export function isStructured(lines: OutputLine[]): boolean {
  const first = lines.find((l) => l.stream === 'stdout');
  if (!first || !first.text.startsWith('{')) return false;
  try {
    return typeof (JSON.parse(first.text) as Json).type === 'string';
  } catch {
    return false;
  }
}
