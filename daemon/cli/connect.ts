// The one place the CLI gets its client: today the local daemon's socket; `--host` (DESIGN §14.1)
// will pick a forwarded socket here and nowhere else.
import { withCalls, type Client } from '../client/calls.ts';
import { createTransport } from '../client/transport.ts';
import { resolvePaths } from '../runtime/paths.ts';

export function connect(env: NodeJS.ProcessEnv): Client {
  return withCalls(createTransport(resolvePaths(env, process.getuid?.() ?? 0).socketPath));
}
