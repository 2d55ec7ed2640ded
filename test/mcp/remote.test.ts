// `grove mcp --host NAME|URL` and GROVE_HOST (DESIGN §14.1): the MCP server of another machine's
// daemon, over a real sshd.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { addProject, DAEMON_ENTRY, sharedForFile } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { sshHostWorld } from '../helpers/sshd.ts';

const world = sharedForFile((c) => sshHostWorld(c));

async function mcp(t: test.TestContext, home: string, args: string[], env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [DAEMON_ENTRY, 'mcp', ...args], env: { ...(process.env as Record<string, string>), GROVE_HOME: home, ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'grove-test', version: '1' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

const projects = async (client: Client) => JSON.parse(((await client.callTool({ name: 'list_projects', arguments: {} })).content as any[]).map((c) => c.text).join(''));

test('grove mcp --host box, and grove mcp with GROVE_HOST=box: list_projects answers the remote daemon’s projects', async (t) => {
  const w = await world();
  const project = await addProject(w.remote, makeRepo(t));
  for (const [args, env] of [[['--host', 'box'], w.env], [[], { ...w.env, GROVE_HOST: 'box' }]] as const) {
    const client = await mcp(t, w.client, [...args], env);
    const listed = await projects(client);
    assert.deepEqual(listed.map((p: any) => p.id), [project.id], args.join(' ') || 'GROVE_HOST');
    await client.close();
  }
});

test('grove mcp --host with an unknown host name exits 2 before it serves anything', async () => {
  const w = await world();
  const r = spawnSync(process.execPath, [DAEMON_ENTRY, 'mcp', '--host', 'nosuch'], { env: { ...process.env, GROVE_HOME: w.client, ...w.env }, input: '', encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no saved host named "nosuch"/);
});
