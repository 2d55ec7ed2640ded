import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { LineTransport } from '../../daemon/mcp/stdio.ts';

// The transport alone, on streams of the test's own, with a small bound.
test('LineTransport: messages split across chunks are read whole; a line over the bound, in pieces, is skipped to its newline and answered; bad lines are answered; reading goes on', async (t) => {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new LineTransport(input, output, 100);
  const got: unknown[] = [];
  transport.onmessage = (m) => got.push(m);
  await transport.start();
  let closed = 0;
  transport.onclose = () => closed++;
  t.after(async () => {
    await transport.close();
    await transport.close();
    assert.equal(closed, 1, 'close() is safe to call twice');
  });
  const answers: any[] = [];
  output.on('data', (c: Buffer) => answers.push(...c.toString('utf8').trim().split('\n').map((l) => JSON.parse(l))));

  const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
  input.write(ping(1).slice(0, 10));
  input.write(`${ping(1).slice(10)}\r\n`);
  // 250 bytes in three chunks, the newline in the last one with the next message after it.
  input.write('x'.repeat(90));
  input.write('x'.repeat(90));
  input.write(`${'x'.repeat(70)}\n${ping(2)}\n`);
  input.write('not json\n');
  input.write('{"jsonrpc":"2.0"}\n');
  input.write(`${ping(3)}\n`);
  await new Promise((r) => setImmediate(r));

  assert.deepEqual(got, [
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    { jsonrpc: '2.0', id: 3, method: 'ping' },
  ]);
  assert.deepEqual(
    answers.map((a) => [a.id, a.error.code]),
    [
      [null, -32600],
      [null, -32700],
      [null, -32600],
    ],
  );
});
