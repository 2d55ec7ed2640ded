import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allows, allowsAddress, formatEntry, parseNetworkEntry, type NetEntry } from '../../daemon/sandbox/allow.ts';

const entries = (...s: string[]): NetEntry[] => s.map((e) => parseNetworkEntry(e) ?? assert.fail(`${e} should parse`));

test('parseNetworkEntry reads a host, *.host, host:port, IPv4, IPv6 and [v6]:port, canonical', () => {
  assert.deepEqual(parseNetworkEntry('registry.npmjs.org'), { host: 'registry.npmjs.org', wildcard: false, port: null });
  assert.deepEqual(parseNetworkEntry('*.GitHub.com'), { host: 'github.com', wildcard: true, port: null });
  assert.deepEqual(parseNetworkEntry('127.0.0.1:5432'), { host: '127.0.0.1', wildcard: false, port: 5432 });
  assert.deepEqual(parseNetworkEntry('10.1.2.3'), { host: '10.1.2.3', wildcard: false, port: null });
  assert.deepEqual(parseNetworkEntry('[::1]:8080'), { host: '::1', wildcard: false, port: 8080 });
  assert.deepEqual(parseNetworkEntry('2001:DB8:0::1'), { host: '2001:db8::1', wildcard: false, port: null });
  assert.deepEqual(parseNetworkEntry('[2001:db8::1]'), { host: '2001:db8::1', wildcard: false, port: null });
  assert.deepEqual(parseNetworkEntry('example.com.:443'), { host: 'example.com', wildcard: false, port: 443 });
  assert.deepEqual(parseNetworkEntry('localhost:3000'), { host: 'localhost', wildcard: false, port: 3000 });
  // 127.1 is how some tools spell 127.0.0.1: one spelling for the match
  assert.deepEqual(parseNetworkEntry('127.1:80'), { host: '127.0.0.1', wildcard: false, port: 80 });
});

test('parseNetworkEntry refuses what is no host, a bad port, a wildcard IP and a loopback host without its port', () => {
  for (const bad of ['', 'http://example.com', 'a b', 'exa!mple.com', 'host:0', 'host:65536', 'host:80x', 'a:b:c', '[::1', '*.1.2.3.4', '*.', 'x'.repeat(64) + '.com']) {
    assert.equal(parseNetworkEntry(bad), null, bad);
  }
  // The machine's own sockets one port at a time: grove's TCP front is on loopback too.
  for (const local of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.0.0.2', '0.0.0.0', 'a.localhost', '*.localhost']) {
    assert.equal(parseNetworkEntry(local), null, local);
  }
});

test('allows: a host matches itself at any port, *.host its subdomains only, host:port that port, in any spelling', () => {
  const e = entries('registry.npmjs.org', '*.github.com', '127.0.0.1:5432', '[::1]:8080', '10.0.0.7');
  assert.ok(allows(e, 'registry.npmjs.org', 443));
  assert.ok(allows(e, 'REGISTRY.npmjs.org.', 80));
  assert.ok(!allows(e, 'evil-registry.npmjs.org', 443));
  assert.ok(allows(e, 'api.github.com', 443));
  assert.ok(allows(e, 'a.b.github.com', 22));
  assert.ok(!allows(e, 'github.com', 443), '*.github.com is not github.com itself');
  assert.ok(!allows(e, 'notgithub.com', 443));
  assert.ok(allows(e, '127.0.0.1', 5432));
  assert.ok(allows(e, '127.1', 5432));
  assert.ok(!allows(e, '127.0.0.1', 5433));
  assert.ok(allows(e, '::1', 8080));
  assert.ok(allows(e, '[0:0::1]', 8080));
  assert.ok(!allows(e, '::1', 8081));
  assert.ok(allows(e, '10.0.0.7', 9999));
  assert.ok(!allows(e, '10.0.0.8', 9999));
  assert.ok(!allows(e, 'not a host', 80));
});

test('allowsAddress: an allowed name that resolves to loopback is refused unless a loopback entry names it', () => {
  const e = entries('example.com', 'db.example.com:5432', 'localhost:3000');
  assert.ok(allowsAddress(e, 'example.com', 443, '93.184.216.34'));
  assert.ok(!allowsAddress(e, 'example.com', 443, '127.0.0.1'));
  assert.ok(!allowsAddress(e, 'example.com', 443, '::ffff:127.0.0.1'));
  assert.ok(!allowsAddress(e, 'example.com', 443, '0.0.0.0'));
  assert.ok(!allowsAddress(e, 'db.example.com', 5432, '::1'), 'a port on a name is not a loopback entry');
  assert.ok(allowsAddress(e, 'localhost', 3000, '127.0.0.1'));
  assert.ok(allowsAddress(e, 'localhost', 3000, '::1'));
});

test('formatEntry writes what parseNetworkEntry reads back', () => {
  for (const s of ['registry.npmjs.org', '*.github.com', '127.0.0.1:5432', '[::1]:8080', '2001:db8::1', 'localhost:3000', '*.example.com:8443']) {
    const e = parseNetworkEntry(s)!;
    assert.deepEqual(parseNetworkEntry(formatEntry(e)), e, s);
  }
});
