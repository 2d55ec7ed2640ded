#!/usr/bin/env node
// The `grove` command (and `grove daemon`, which npm start and the service run): the CLI built
// into dist/ at install (`npm ci` runs the build).
import '../dist/daemon/cli/main.js';
