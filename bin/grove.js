#!/usr/bin/env node
// The `grove` command (and `grove daemon`, which npm start and the service run): the CLI built
// into dist/ at install (`npm ci` runs the build).
// An older Node fails here with one line, not later with a syntax or API error (exit 69, as for
// a missing git: a program grove needs is not there).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 22)) {
  process.stderr.write(`grove needs Node.js 22.22 or newer; this is ${process.version} (docs/testing.md says how to install one from npm)\n`);
  process.exit(69);
}
await import('../dist/daemon/cli/main.js');
