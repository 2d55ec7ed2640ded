import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createJournal } from './journal.ts';
import { ROOT } from './root.ts';
import type { Logger } from './log.ts';
import type { Settings } from './settings.ts';
import { acquireDataLock, type DataLock } from './lock.ts';
import { openStore, type Store } from './store/db.ts';
import { projectsTable } from './store/projects.ts';
import { createProjectService } from './projects.ts';
import { createApiHandler } from './http/api.ts';
import { listenOnSocket } from './http/server.ts';
import { startFront } from './http/front.ts';
import { healthRoutes } from './routes/health.ts';
import { projectRoutes } from './routes/projects.ts';
import { taskRoutes } from './routes/tasks.ts';
import { createProjectConfigs } from './project-config.ts';
import { createPool } from './pool.ts';
import { relayThrough } from './git.ts';
import { createPortAllocator } from './ports.ts';
import { createTaskService } from './tasks.ts';
import { tasksTable } from './store/tasks.ts';
import { portLeasesTable } from './store/port-leases.ts';
import { setupLogTable } from './store/setup-log.ts';
import { sessionsTable } from './store/sessions.ts';
import { createSessionService, type SessionService } from './sessions/service.ts';
import { createSpawner, type Spawner } from './sessions/spawner.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { openApiRoute } from './routes/openapi.ts';
import { createAgents } from './agents.ts';

export const VERSION: string = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
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

// Starts every part in order (lock, store, config watcher, pool, tasks, sessions, API, front);
// close() stops them in reverse.
export async function startDaemon(
  settings: Settings,
  log: Logger,
  // Begun by the caller so the store opens while modules load; otherwise begun here.
  early?: { lock: DataLock; spawner: Spawner; store: Promise<Store> },
): Promise<Daemon> {
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

  let port: number | null = null;
  try {
    const lock = early?.lock ?? acquireDataLock(settings.dataDir);
    started.push({ name: 'lock', close: () => lock.close() });

    const spawner = early?.spawner ?? createSpawner({ log: log.child({ module: 'spawner' }) });
    spawner.launch(); // at once if not yet: forking gets slower as PGlite fills this process
    started.push({ name: 'spawner', close: () => spawner.close() });

    const store = await (early?.store ?? openStore({ dataDir: settings.dataDir, log: log.child({ module: 'store' }) }));
    started.push({ name: 'store', close: () => store.close() });

    // Everything up to the API handler is built while PGlite opens in its thread: nothing
    // below waits for the store until `store.ready`.
    const configs = createProjectConfigs({ log: log.child({ module: 'config' }) });
    started.push({ name: 'configs', close: () => configs.close() });
    const projectRows = projectsTable(store.db);

    // The worktree threads' git runs from the spawner: each fork of this process costs ~10 ms.
    const pool = createPool({ gitRelay: relayThrough((file, args, o) => spawner.run(file, args, o)) });
    started.push({ name: 'pool', close: () => pool.close() });

    const taskRows = tasksTable(store.db);
    const sessionRows = sessionsTable(store.db);
    const projects = createProjectService({
      projects: projectRows,
      countLiveTasks: (id) => taskRows.countLive(id),
      configs,
      // Removing a project deletes its tasks and their sessions by cascade, out of their modules' sight.
      onRemoved: () => {
        sessionRows.forgetAll();
        taskRows.forgetAll();
      },
    });
    // Sessions need tasks and archiving a task kills its sessions: the link is made once both exist.
    let sessionsRef: SessionService | null = null;
    const tasks = createTaskService({
      killSessions: (taskId) => sessionsRef?.killAllOfTask(taskId) ?? Promise.resolve(),
      tasks: taskRows,
      setupLog: setupLogTable(store.db),
      getProject: (id) => projects.get(id),
      pool,
      ports: createPortAllocator({ leases: portLeasesTable(store.db), range: settings.portRange }),
      configs,
      setupTimeoutS: settings.setupTimeoutS,
      journal: createJournal(path.join(settings.dataDir, 'journal')),
      log: log.child({ module: 'tasks' }),
    });
    started.push({ name: 'tasks', close: () => tasks.close() });

    const agents = createAgents(settings.config);
    const sessions = createSessionService({
      sessions: sessionRows,
      getTask: (id) => tasks.get(id),
      getProject: (id) => projects.get(id),
      configs,
      agents,
      defaultAgent: settings.config.default_agent,
      dataDir: settings.dataDir,
      spawner,
      log: log.child({ module: 'sessions' }),
    });
    sessionsRef = sessions;
    started.push({ name: 'sessions', close: () => sessions.close() });

    // Recovery queries queue until PGlite is open and run while the routes and Ajv compile.
    const recovered = (async () => {
      await store.ready;
      for (const p of await projectRows.list()) configs.watch(p.path);
      await tasks.recover();
      await sessions.reattach();
    })();
    recovered.catch(() => {}); // awaited below, after the handler is built

    const routes = [
      ...healthRoutes({ version: VERSION, startedAt, socket: settings.socketPath, port: () => port }),
      ...projectRoutes({ projects }),
      ...taskRoutes({ tasks }),
      ...sessionRoutes({ sessions, agents }),
    ];
    routes.push(...openApiRoute({ routes, version: VERSION }));
    const handler = createApiHandler({ routes, log: log.child({ module: 'api' }) });

    await recovered;

    const api = await listenOnSocket({ socketPath: settings.socketPath, handler, log: log.child({ module: 'api' }) });
    started.push({ name: 'api', close: () => api.close() });

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
