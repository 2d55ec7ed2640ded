import './env.ts';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pino } from 'pino';
import { createProjectConfigs } from '../../daemon/projects/config.ts';
import { portLeasesTable } from '../../daemon/store/port-leases.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { setupLogTable } from '../../daemon/store/setup-log.ts';
import { tasksTable } from '../../daemon/store/tasks.ts';
import { createJournal } from '../../daemon/journal/creation.ts';
import { createPool } from '../../daemon/tasks/threads.ts';
import { createPortAllocator } from '../../daemon/tasks/ports.ts';
import { createTaskReader, withPresence } from '../../daemon/tasks/read.ts';
import { makeRepo } from './git.ts';
import { openTestStore, TEST_HOST_ID } from './store.ts';

// What registers what a test made to be removed: a test's context, or a file's `after`.
export interface Cleanup {
  after(fn: () => unknown): void;
}

// What the task verbs are made from, for real and in this process: a store (PGlite in its
// thread, or PostgreSQL under test:postgres), the worker pool on the built workers, the tables,
// a journal, ports, configs.
// Everything is closed and removed after the test (or the file, given its `after`); a file's
// subtests may share one set.
export async function taskParts(t: Cleanup) {
  const log = pino({ level: 'silent' });
  const testStore = await openTestStore((fn) => t.after(fn), log);
  const { store, events, dataDir, getProject } = testStore;
  const pool = createPool({ maxThreads: 2 });
  const configs = createProjectConfigs({ log });
  t.after(async () => {
    await pool.close();
    await configs.close();
  });

  const projects = projectsTable(store.db, events);
  const tasks = tasksTable(store.db, events, withPresence);
  const leases = portLeasesTable(store.db);
  return {
    testStore,
    log,
    pool,
    configs,
    tasks,
    leases,
    getProject,
    localProjects: () => projects.listOfHost(TEST_HOST_ID),
    setupLog: setupLogTable(store.db),
    teardownLog: setupLogTable(store.db, 'teardown'),
    read: createTaskReader({ tasks, getProject, hostId: TEST_HOST_ID }),
    journal: createJournal(path.join(dataDir, 'journal')),
    ports: createPortAllocator({ leases, range: [20000, 29999] }),
    // No services here: a task that becomes ready has nothing to autostart.
    onReady: async () => {},
    // A real repository, with `.grove.json` when a config is given, added as a project (of
    // another host when given).
    async project(config?: object, hostId = TEST_HOST_ID) {
      const repo = makeRepo(t, config ? { files: { 'README.md': '# fixture\n', '.grove.json': JSON.stringify(config) } } : {});
      return projects.insert({ id: randomUUID(), name: path.basename(repo), path: repo, host_id: hostId, repository: null });
    },
  };
}

export type TaskParts = Awaited<ReturnType<typeof taskParts>>;
