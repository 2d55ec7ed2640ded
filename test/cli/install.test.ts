import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parse as parsePlist } from 'plist';
import { render } from '../../daemon/cli/install.ts';
import { makeHome, ROOT } from '../helpers/daemon.ts';

const GROVE = path.join(ROOT, 'bin', 'grove.js');

function grove(home: string, args: string[]) {
  const r = spawnSync(process.execPath, [GROVE, ...args], {
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: '', GROVE_HOME: home },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('the generated systemd unit passes systemd-analyze verify', (t) => {
  const home = makeHome(t);
  const { file, content } = render('linux', { HOME: home, PATH: '/usr/bin:/bin:/opt/my tools/bin' });
  assert.equal(file, path.join(home, '.config', 'systemd', 'user', 'grove.service'));
  assert.match(content, new RegExp(`^ExecStart="${process.execPath}" --liftoff-only --max-semi-space-size=4 --v8-pool-size=1 "${GROVE}" daemon$`, 'm'));
  assert.match(content, /^KillMode=process$/m);
  assert.match(content, /^Restart=on-failure$/m);
  // Restarted on 75 too, without a start limit: a PostgreSQL down at boot comes back later.
  assert.match(content, /^StartLimitIntervalSec=0$/m);
  assert.match(content, /^RestartPreventExitStatus=78$/m);
  assert.match(content, /^Environment="PATH=\/usr\/bin:\/bin:\/opt\/my tools\/bin"$/m);
  assert.doesNotMatch(content, /@[A-Z]+@/);
  const unit = path.join(home, 'grove.service');
  writeFileSync(unit, content);
  const r = spawnSync('systemd-analyze', ['verify', '--user', unit], { encoding: 'utf8', env: { ...process.env, HOME: home, XDG_RUNTIME_DIR: home } });
  const complaints = (r.stderr + r.stdout).split('\n').filter((l) => l.includes('grove.service'));
  assert.deepEqual(complaints, [], `systemd-analyze: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
});

test('the generated launchd plist is a valid property list with the right keys', (t) => {
  const home = makeHome(t);
  const { file, content } = render('darwin', { HOME: home, PATH: '/usr/bin:/bin' });
  assert.equal(file, path.join(home, 'Library', 'LaunchAgents', 'dev.grove.daemon.plist'));
  const plutil = spawnSync('plutil', ['-lint', '-'], { input: content });
  if (plutil.error === undefined) assert.equal(plutil.status, 0);
  const parsed = parsePlist(content) as Record<string, any>;
  assert.equal(parsed.Label, 'dev.grove.daemon');
  assert.deepEqual(parsed.ProgramArguments, [process.execPath, '--liftoff-only', '--max-semi-space-size=4', '--v8-pool-size=1', GROVE, 'daemon']);
  assert.equal(parsed.AbandonProcessGroup, true);
  assert.equal(parsed.RunAtLoad, true);
  assert.deepEqual(parsed.KeepAlive, { SuccessfulExit: false });
  assert.equal(parsed.StandardOutPath, path.join(home, 'Library', 'Logs', 'grove.log'));
  assert.equal(parsed.EnvironmentVariables.PATH, '/usr/bin:/bin');
});

test('install and uninstall --dry-run print every file and command and change nothing', (t) => {
  const home = makeHome(t);
  const linux = grove(home, ['install', '--dry-run', '--platform', 'linux']);
  assert.equal(linux.code, 0, linux.stderr);
  const unit = path.join(home, '.config', 'systemd', 'user', 'grove.service');
  assert.match(linux.stdout, new RegExp(`^would write ${unit}:$`, 'm'));
  assert.match(linux.stdout, /^ExecStart=.*grove\.js" daemon$/m);
  assert.match(linux.stdout, /^would run: systemctl --user daemon-reload$/m);
  assert.match(linux.stdout, /^would run: systemctl --user enable --now grove\.service$/m);
  const mac = grove(home, ['install', '--dry-run', '--platform', 'darwin', '--json']);
  const plan = JSON.parse(mac.stdout);
  assert.equal(plan.dry_run, true);
  assert.equal(plan.file, path.join(home, 'Library', 'LaunchAgents', 'dev.grove.daemon.plist'));
  assert.deepEqual(plan.commands, [['launchctl', 'bootstrap', `gui/${process.getuid!()}`, plan.file]]);
  const un = grove(home, ['uninstall', '--dry-run', '--platform', 'linux']);
  assert.match(un.stdout, /would run: systemctl --user disable --now grove\.service\nwould remove .*grove\.service\nwould run: systemctl --user daemon-reload/);
  const unMac = grove(home, ['uninstall', '--dry-run', '--platform', 'darwin']);
  assert.match(unMac.stdout, new RegExp(`would run: launchctl bootout gui/${process.getuid!()}/dev.grove.daemon`));
  assert.ok(!existsSync(unit) && !existsSync(path.join(home, 'Library')), 'nothing written');
  assert.equal(grove(home, ['install', '--dry-run', '--platform', 'win32']).code, 2);
});

test('install without a running user manager fails clearly and changes nothing', (t) => {
  let managerRuns = true;
  try {
    execFileSync('systemctl', ['--user', 'show-environment'], { stdio: 'ignore' });
  } catch {
    managerRuns = false;
  }
  // Where a user manager does run, installing for real is not for a test to do.
  assert.equal(managerRuns, false, 'this test needs a machine without a systemd user manager');
  const home = makeHome(t);
  const r = grove(home, ['install', '--platform', 'linux']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /systemd user manager/);
  assert.match(r.stderr, /Nothing was changed/);
  assert.ok(!existsSync(path.join(home, '.config', 'systemd')), 'no unit written');
});

test('a reader that stops early (`grove install --dry-run | head -1`) ends the command quietly', (t) => {
  const home = makeHome(t);
  const r = spawnSync('sh', ['-c', `"${process.execPath}" "${GROVE}" install --dry-run | head -1`], {
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: '', GROVE_HOME: home },
    encoding: 'utf8',
  });
  assert.match(r.stdout, /^would write .*grove\.service:$/m);
  assert.equal(r.stderr, '', 'no EPIPE stack trace');
});
