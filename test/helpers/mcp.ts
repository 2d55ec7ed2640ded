// `grove mcp` driven by the MCP SDK's own client over stdio, and a tool's answer as a test reads it.
import type { TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DAEMON_ENTRY } from './daemon.ts';

// `grove mcp` as a child process, driven by the SDK's own client over stdio.
export async function mcp(t: TestContext, home: string, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [DAEMON_ENTRY, 'mcp', ...args], env: { ...(process.env as Record<string, string>), GROVE_HOME: home }, stderr: 'pipe' });
  const client = new Client({ name: 'grove-test', version: '1' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

// A tool's answer: its JSON (or text), or its error's code and detail.
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r: any = await client.callTool({ name, arguments: args });
  const text = r.content.map((c: any) => c.text).join('');
  if (r.isError) return { error: r.structuredContent, text };
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
