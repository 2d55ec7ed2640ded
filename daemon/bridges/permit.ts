// `grove approval-mcp --session ID`: Claude Code's permission prompt tool (DESIGN §15,
// docs/agents.md "Approvals"), an MCP server over stdio with one tool, `approve`. Each call Claude
// Code's mode would refuse is asked through the daemon's ask API (keyed by the tool-use id, so
// asking again after a lost answer finds the same approval) and answered with its verdict.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalVerdict } from '../../schemas/approval.ts';
import { decide } from './ask.ts';
import type { Client } from '../client/calls.ts';
import { ApiProblem } from '../client/problem.ts';
import { serveStdio } from '../mcp/server.ts';

const INPUT = {
  type: 'object',
  properties: {
    tool_name: { type: 'string', description: 'the tool Claude Code wants to run' },
    input: { type: 'object', description: "the tool's whole input" },
    tool_use_id: { type: 'string', description: "Claude Code's id of the call" },
  },
  required: ['tool_name', 'input'],
};

// What Claude Code is told: allow runs `updatedInput` (required), with a question's answer as
// `answers` (`{question: text}`); deny and expiry give the model the message verbatim.
export function answerOf(tool: string, input: Record<string, unknown>, verdict: ApprovalVerdict): { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string } {
  if (verdict.behavior !== 'allow') return { behavior: 'deny', message: verdict.message };
  if (tool !== 'AskUserQuestion' || verdict.answer === null) return { behavior: 'allow', updatedInput: input };
  const questions = Array.isArray(input.questions) ? (input.questions as Array<{ question?: unknown }>) : [];
  const answers = Object.fromEntries(questions.filter((q) => typeof q?.question === 'string').map((q) => [q.question as string, verdict.answer]));
  return { behavior: 'allow', updatedInput: { ...input, answers } };
}

export function createPermitServer(opts: { api: Client; session: string; version: string }): Server {
  const server = new Server({ name: 'grove', version: opts.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'approve', description: "Asks the person through grove whether a tool call may run (Claude Code's permission prompt tool)", inputSchema: INPUT }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const text = (answer: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(answer) }] });
    if (req.params.name !== 'approve') return { isError: true, content: [{ type: 'text', text: `UNKNOWN_TOOL: no tool named ${req.params.name}` }] };
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    const input = args.input !== null && typeof args.input === 'object' && !Array.isArray(args.input) ? (args.input as Record<string, unknown>) : {};
    const tool = typeof args.tool_name === 'string' ? args.tool_name : '';
    // Without Claude Code's id a call cannot be found again: the request's own id stands in.
    const key = typeof args.tool_use_id === 'string' && args.tool_use_id !== '' ? args.tool_use_id : `mcp-${String(extra.requestId)}`;
    try {
      const kind = tool === 'AskUserQuestion' ? 'question' : 'tool';
      const verdict = await decide(opts.api, opts.session, { key, kind, tool, input }, extra.signal);
      return text(answerOf(tool, input, verdict));
    } catch (err) {
      // Grove could not ask (the session ended, a malformed call): the call is refused, saying why.
      const message = err instanceof ApiProblem ? `grove could not ask about this call: ${err.code}: ${err.detail}` : `grove could not ask about this call: ${(err as Error).message}`;
      return text({ behavior: 'deny', message });
    }
  });
  return server;
}

// Serves on stdin and stdout until Claude Code goes.
export async function runPermit(opts: { api: Client; session: string; version: string }): Promise<void> {
  await serveStdio(createPermitServer(opts));
}
