import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { agentsOf } from '../../daemon/agents/agents.ts';
import { DEFAULT_PORT, loadSettings, loadUserConfig, SettingsError } from '../../daemon/runtime/settings.ts';
import { makeTempDir } from '../helpers/git.ts';

// A GROVE_HOME of its own whose config.json holds `config` (a string is written as it is).
function home(t: test.TestContext, config?: unknown): { GROVE_HOME: string; HOME: string } {
  const dir = makeTempDir(t);
  if (config !== undefined) writeFileSync(path.join(dir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return { GROVE_HOME: dir, HOME: dir };
}

test('settings: no config file is the defaults; the config and then the environment override them', (t) => {
  const plain = loadSettings(home(t), 1);
  assert.equal(plain.port, DEFAULT_PORT);
  assert.equal(plain.logLevel, 'info');
  assert.deepEqual(plain.config, {});
  assert.deepEqual(plain.portRange, [20000, 29999]);
  assert.deepEqual([plain.setupTimeoutS, plain.gitTimeoutS, plain.eventStallMs], [600, 120, undefined]);

  const env = home(t, { port: 'off', port_range: [30000, 30010], setup_timeout_s: 5, git_timeout_s: 7 });
  const configured = loadSettings(env, 1);
  assert.deepEqual([configured.port, configured.portRange, configured.setupTimeoutS, configured.gitTimeoutS], [null, [30000, 30010], 5, 7]);
  assert.equal(loadSettings({ ...env, GROVE_PORT: '0' }, 1).port, 0, 'the environment wins over the config');
  assert.equal(loadSettings({ ...home(t, { port: 8000 }), GROVE_PORT: 'off' }, 1).port, null);
  assert.equal(loadSettings({ ...env, GROVE_PORT: '' }, 1).port, null, 'an empty variable is no variable');
  const tuned = loadSettings({ ...env, GROVE_LOG_LEVEL: 'debug', GROVE_EVENT_STALL_MS: '250' }, 1);
  assert.deepEqual([tuned.logLevel, tuned.eventStallMs], ['debug', 250]);
  assert.equal(loadSettings({ ...env, GROVE_EVENT_STALL_MS: '-5' }, 1).eventStallMs, undefined, 'not a positive integer: the default');
});

test('settings: a bad variable or config file is a SettingsError naming the variable, the file and the field', (t) => {
  const env = home(t);
  for (const port of ['65536', '80a', '-1']) {
    assert.throws(() => loadSettings({ ...env, GROVE_PORT: port }, 1), { name: 'SettingsError', message: `GROVE_PORT must be a port number 0-65535 or "off", got "${port}"` });
  }
  assert.throws(() => loadSettings({ ...env, GROVE_LOG_LEVEL: 'loud' }, 1), { name: 'SettingsError', message: /GROVE_LOG_LEVEL must be one of fatal, error, .*, got "loud"/ });

  const file = (config: unknown) => path.join(home(t, config).GROVE_HOME, 'config.json');
  const bad = file('{"port": 1,');
  assert.throws(() => loadUserConfig(bad), { name: 'SettingsError', message: new RegExp(`^config file ${bad} is not valid JSON`) });
  assert.throws(() => loadUserConfig(file({ port: 'any', colour: 'red' })), (err: Error) => {
    assert.ok(err instanceof SettingsError);
    assert.match(err.message, /is invalid: .*\/colour is not an allowed field/);
    assert.match(err.message, /\/port /);
    return true;
  });
  assert.equal(loadSettings(home(t, { accept_remote: false }), 1).config.accept_remote, false);
  assert.throws(() => loadUserConfig(file({ accept_remote: 'no' })), { name: 'SettingsError', message: /is invalid: \/accept_remote must be boolean/ });
  assert.throws(() => loadUserConfig(file({ port_range: [30010, 30000] })), /\/port_range must be \[from, to\] with from <= to/);
  // An unknown default_agent is refused when the agents are made from the settings (agentsOf).
  const unknownAgent = file({ default_agent: 'nobody' });
  assert.throws(() => agentsOf({ configFile: unknownAgent, config: loadUserConfig(unknownAgent) }), /\/default_agent "nobody" is neither a built-in agent nor one of \/agents/);
  assert.deepEqual(loadUserConfig(file({ default_agent: 'mine', agents: { mine: { command: ['echo', '{prompt}'] } } })).default_agent, 'mine');

  // A config that is there but cannot be read is not taken for a missing one.
  assert.throws(() => loadUserConfig(path.dirname(file({}))), /cannot read config file .*EISDIR/);
});

test('settings: allow (Claude Code rules) and approval_timeout_s are checked where they enter', (t) => {
  const file = (config: unknown) => path.join(home(t, config).GROVE_HOME, 'config.json');
  const ok = loadUserConfig(file({ allow: ['Bash(npm test:*)', 'Edit', 'WebFetch(domain:docs.rs)', 'mcp__github__*'], approval_timeout_s: 90 }));
  assert.deepEqual([ok.allow?.length, ok.approval_timeout_s], [4, 90]);
  assert.throws(() => loadUserConfig(file({ approval_timeout_s: 0 })), /\/approval_timeout_s /);
  assert.throws(() => loadUserConfig(file({ approval_timeout_s: 'soon' })), /\/approval_timeout_s /);
  assert.throws(() => loadUserConfig(file({ allow: ['Bash(npm test'] })), /\/allow\/0 /);
  assert.throws(() => loadUserConfig(file({ allow: 'Edit' })), /\/allow /);
});

test('settings: database_url from the config, GROVE_DATABASE_URL over it; neither echoed when refused', (t) => {
  assert.equal(loadSettings(home(t), 1).databaseUrl, null, 'without either: PGlite');
  const url = 'postgresql://grove:s3cret@db.example:5432/grove?sslmode=verify-full';
  const env = home(t, { database_url: url });
  assert.equal(loadSettings(env, 1).databaseUrl, url);
  assert.equal(loadSettings({ ...env, GROVE_DATABASE_URL: 'postgres://other/x' }, 1).databaseUrl, 'postgres://other/x', 'the variable wins');
  assert.equal(loadSettings({ ...env, GROVE_DATABASE_URL: '' }, 1).databaseUrl, url, 'an empty variable is no variable');
  for (const bad of ['mysql://u:s3cret@h/x', 'not a url s3cret']) {
    assert.throws(() => loadSettings({ ...env, GROVE_DATABASE_URL: bad }, 1), (err: Error) => {
      assert.ok(err instanceof SettingsError);
      assert.equal(err.message, 'GROVE_DATABASE_URL must be a postgres:// or postgresql:// URL');
      return true;
    });
  }
  assert.throws(() => loadSettings(home(t, { database_url: 'mysql://u:s3cret@h/x' }), 1), (err: Error) => {
    assert.match(err.message, /is invalid: \/database_url /);
    assert.ok(!err.message.includes('s3cret'), err.message);
    return true;
  });
});
