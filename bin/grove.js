#!/usr/bin/env node
// The `grove` command: registers tsx, then runs the TypeScript CLI.
import { register } from 'tsx/esm/api';

register();
await import('../daemon/cli/main.ts');
