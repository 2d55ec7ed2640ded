import { readFileSync } from 'node:fs';
import type { Logger } from './log.ts';
import type { Settings } from './settings.ts';
import { acquireDataLock } from './lock.ts';
import { openStore } from './store/db.ts';
import { projectsTable } from './store/projects.ts';
import { createProjectService } from './projects.ts';
import { createApiHandler } from './http/api.ts';
import { listenOnSocket } from './http/server.ts';
import { startFront } from './http/front.ts';
import { healthRoutes } from './routes/health.ts';
import { projectRoutes } from './routes/projects.ts';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export interface Daemon {
  readonly socketPath: string;
  /** null when the TCP front is off. */
  readonly port: number | null;
  close(): Promise<void>;
}

interface Closable {
  name: string;
  close(): Promise<void>;
}

// Starts every part in order (lock, store, API, front); close() stops them in reverse.
export async function startDaemon(settings: Settings, log: Logger): Promise<Daemon> {
  const started: Closable[] = [];
  const startedAt = new Date().toISOString();

  async function closeAll(): Promise<void> {
    while (started.length > 0) {
      const part = started.pop()!;
      try {
        await part.close();
      } catch (err) {
        log.error({ err, part: part.name }, 'error while closing');
      }
    }
  }

  try {
    const lock = acquireDataLock(settings.dataDir);
    started.push({ name: 'lock', close: () => lock.close() });

    const store = await openStore({ dataDir: settings.dataDir, log: log.child({ module: 'store' }) });
    started.push({ name: 'store', close: () => store.close() });

    const projects = createProjectService({ projects: projectsTable(store.db) });
    const routes = [...healthRoutes({ version: VERSION, startedAt }), ...projectRoutes({ projects })];
    const handler = createApiHandler({ routes, log: log.child({ module: 'api' }) });

    const api = await listenOnSocket({ socketPath: settings.socketPath, handler, log: log.child({ module: 'api' }) });
    started.push({ name: 'api', close: () => api.close() });

    let port: number | null = null;
    if (settings.port !== null) {
      const front = await startFront({ port: settings.port, socketPath: settings.socketPath, log: log.child({ module: 'front' }) });
      started.push({ name: 'front', close: () => front.close() });
      port = front.port;
    }

    log.info({ version: VERSION, socket: settings.socketPath, port, data: settings.dataDir }, 'grove daemon ready');
    let closing: Promise<void> | null = null;
    return {
      socketPath: settings.socketPath,
      port,
      close: () => (closing ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
