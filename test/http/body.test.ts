import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import test from 'node:test';
import { request } from 'undici';
import { assertJsonContentType, discardBody, hasBody, MAX_BODY_BYTES, readJson } from '../../daemon/http/body.ts';
import { answering } from '../helpers/http.ts';

type Answer = { value?: unknown; code?: string; message?: string };

// POSTs `body` to a server that answers what `handle` made of the request. A body given as a
// list of chunks goes chunked, with no Content-Length.
async function post(port: number, headers: Record<string, string>, body?: Buffer | string | Buffer[]): Promise<Answer> {
  const chunked = Array.isArray(body) ? Readable.from(body) : body;
  const res = await request(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body: chunked });
  assert.equal(res.statusCode, 200);
  return (await res.body.json()) as Answer;
}

const JSON_TYPE = { 'content-type': 'application/json' };

test('body: whether there is one, and only application/json (utf-8) is taken', async (t) => {
  const bodied = await answering(t, (req) => hasBody(req));
  assert.deepEqual(await post(bodied, {}), { value: false });
  assert.deepEqual(await post(bodied, {}, ''), { value: false }, 'Content-Length: 0');
  assert.deepEqual(await post(bodied, {}, '{}'), { value: true });
  assert.deepEqual(await post(bodied, {}, [Buffer.from('{}')]), { value: true }, 'chunked');

  const typed = await answering(t, (req) => assertJsonContentType(req) ?? 'accepted');
  for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON; Charset="UTF-8"']) {
    assert.deepEqual(await post(typed, { 'content-type': type }, '{}'), { value: 'accepted' }, type);
  }
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/jsonx']) {
    assert.deepEqual(await post(typed, { 'content-type': type }, '{}'), {
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: `Content-Type ${JSON.stringify(type)} is not accepted; send application/json`,
    });
  }
  assert.deepEqual(await post(typed, {}, '{}'), { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'a request body needs Content-Type: application/json' });
});

test('body: read as UTF-8 JSON, anything else is INVALID_JSON saying why', async (t) => {
  const port = await answering(t, (req) => readJson(req));
  assert.deepEqual(await post(port, JSON_TYPE, '{"name":"é","n":[1,2]}'), { value: { name: 'é', n: [1, 2] } });
  assert.deepEqual(await post(port, JSON_TYPE, [Buffer.from('{"na'), Buffer.from('me":'), Buffer.from('"x"}')]), { value: { name: 'x' } }, 'a body in pieces');
  assert.deepEqual(await post(port, JSON_TYPE, Buffer.from([0x22, 0xff, 0x22])), { code: 'INVALID_JSON', message: 'the request body is not valid UTF-8' });
  assert.deepEqual(await post(port, JSON_TYPE, ' \n'), { code: 'INVALID_JSON', message: 'the request body is empty' });
  const broken = await post(port, JSON_TYPE, '{"name":');
  assert.equal(broken.code, 'INVALID_JSON');
  assert.match(broken.message!, /^the request body is not valid JSON: /);
});

test('body: past MAX_BODY_BYTES is PAYLOAD_TOO_LARGE, declared or sent chunked, and the answer still arrives', async (t) => {
  const tooLarge = { code: 'PAYLOAD_TOO_LARGE', message: `request bodies are limited to ${MAX_BODY_BYTES} bytes` };
  const read = await answering(t, (req) => readJson(req));
  const dropped = await answering(t, async (req) => (await discardBody(req)) ?? 'discarded');
  const exact = Buffer.alloc(MAX_BODY_BYTES, ' ');
  exact.write('{}');
  assert.deepEqual(await post(read, JSON_TYPE, exact), { value: {} }, 'exactly the limit is read');
  assert.deepEqual(await post(dropped, JSON_TYPE, exact), { value: 'discarded' });
  const over = Buffer.concat([exact, Buffer.from(' ')]);
  for (const port of [read, dropped]) {
    assert.deepEqual(await post(port, JSON_TYPE, over), tooLarge, 'by its Content-Length');
    const pieces = Array.from({ length: 24 }, () => Buffer.alloc(64 * 1024, ' '));
    assert.deepEqual(await post(port, JSON_TYPE, pieces), tooLarge, 'counted as it comes');
  }
});
