// The baseline of the approvals bench: a stdio MCP server with one tool, `approve`, that answers
// every call at once with an allow, as grove's bridge answers once the person allowed it.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'instant', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'approve', description: 'Allows every call at once.', inputSchema: { type: 'object', properties: { tool_name: { type: 'string' }, input: { type: 'object' } } } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({
  content: [{ type: 'text', text: JSON.stringify({ behavior: 'allow', updatedInput: req.params.arguments?.input ?? {} }) }],
}));
await server.connect(new StdioServerTransport());
