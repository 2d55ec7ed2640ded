#!/usr/bin/env node
// The `grove` command: `grove daemon` runs the daemon's start-up bundle (daemon/start.mjs);
// every other command registers tsx and runs the TypeScript CLI.
if (process.argv[2] === 'daemon' && process.argv.length === 3) {
  await import('../daemon/start.mjs');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../daemon/cli/main.ts');
}
