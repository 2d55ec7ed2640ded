// `grove mcp`: an MCP server over stdio (the official SDK) whose tools call the daemon over its
// unix socket, as the CLI does. The SDK's low-level Server is used because the tools' input
// schemas are JSON Schemas already (the daemon's own), which McpServer would want as zod.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '../client/calls.ts';
import { ApiProblem } from '../client/problem.ts';
import { DaemonUnreachable } from '../client/transport.ts';
import { compile, createAjv } from '../runtime/validation.ts';
import { LineTransport } from './stdio.ts';
import { TOOLS } from './tools.ts';

// A tool error an agent can act on: the problem's code and detail, as text and as data.
function toolError(code: string, detail: string, status?: number): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${detail}` }], structuredContent: { code, detail, ...(status ? { status } : {}) } };
}

// The server for `tools` over `api`; `readOnly` offers only the tools that change nothing.
export function createMcpServer(opts: { api: Client; readOnly: boolean; version: string }): Server {
  const tools = TOOLS.filter((t) => !opts.readOnly || t.readOnly);
  const ajv = createAjv();
  const checks = new Map(tools.map((t) => [t.name, compile(ajv, t.input)]));
  const server = new Server({ name: 'grove', version: opts.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: JSON.parse(JSON.stringify(t.input)),
      annotations: { readOnlyHint: t.readOnly, destructiveHint: t.destructive, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) return toolError('UNKNOWN_TOOL', `no tool named ${req.params.name}${opts.readOnly ? ' (grove mcp runs read-only)' : ''}`);
    const args = req.params.arguments ?? {};
    const check = checks.get(tool.name)!;
    if (!check(args)) return toolError('VALIDATION_FAILED', check.issues().map((i) => `${i.path || '/'} ${i.message}`).join('; '));
    try {
      const out = await tool.run(opts.api, args);
      return { content: [{ type: 'text', text: typeof out === 'string' ? out : JSON.stringify(out, null, 2) }] };
    } catch (err) {
      if (err instanceof ApiProblem) return toolError(err.code, err.detail, err.status);
      if (err instanceof DaemonUnreachable) return toolError('DAEMON_NOT_RUNNING', err.message);
      return toolError('INTERNAL', (err as Error).message);
    }
  });
  return server;
}

// Serves on stdin and stdout until the client goes.
export async function runMcp(opts: { api: Client; readOnly: boolean; version: string }): Promise<void> {
  await serveStdio(createMcpServer(opts));
}

// Serves `server` on stdin and stdout until the client goes (`grove mcp`, `grove approval-mcp`).
export async function serveStdio(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new LineTransport());
  await closed;
}
