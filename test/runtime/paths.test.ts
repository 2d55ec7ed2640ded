import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolvePaths } from '../../daemon/runtime/paths.ts';

test('XDG defaults, with /tmp/grove-<uid> when there is no runtime dir', () => {
  const p = resolvePaths({ HOME: '/h/user' }, 1000);
  assert.deepEqual(p, {
    configFile: '/h/user/.config/grove/config.json',
    dataDir: '/h/user/.local/state/grove',
    socketPath: '/tmp/grove-1000/grove.sock',
  });
  const x = resolvePaths({ HOME: '/h/user', XDG_CONFIG_HOME: '/c', XDG_STATE_HOME: '/s', XDG_RUNTIME_DIR: '/run/user/1000' }, 1000);
  assert.deepEqual(x, { configFile: '/c/grove/config.json', dataDir: '/s/grove', socketPath: '/run/user/1000/grove/grove.sock' });
  // Relative XDG values are invalid per the spec and ignored.
  assert.equal(resolvePaths({ HOME: '/h/user', XDG_STATE_HOME: 'rel' }, 1).dataDir, '/h/user/.local/state/grove');
});

test('GROVE_HOME holds everything; specific variables win over it', () => {
  assert.deepEqual(resolvePaths({ HOME: '/h/user', GROVE_HOME: '/g', XDG_RUNTIME_DIR: '/run/user/1' }, 1), {
    configFile: '/g/config.json',
    dataDir: '/g/data',
    socketPath: '/g/grove.sock',
  });
  assert.deepEqual(
    resolvePaths({ HOME: '/h/user', GROVE_HOME: '/g', GROVE_CONFIG: '/etc/c.json', GROVE_DATA_DIR: '/d', GROVE_SOCKET: '/s/x.sock' }, 1),
    { configFile: '/etc/c.json', dataDir: '/d', socketPath: '/s/x.sock' },
  );
});
