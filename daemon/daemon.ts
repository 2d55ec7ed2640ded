// The composition root: every part of the daemon made once, in start order, with what it needs
// passed in; close() stops them in reverse order.
import path from 'node:path';
import type { Agents } from './agents/agents.ts';
import { listenOnSocket } from './http/server.ts';
import { startFront } from './http/front.ts';
import { createApiHandler } from './http/api.ts';
import { createSessionSockets } from './http/session-socket.ts';
import { createProjectConfigs } from './projects/config.ts';
import { createProjectService } from './projects/service.ts';
import { healthRoutes } from './routes/health.ts';
import { uiRoutes } from './routes/ui.ts';
import { openApiRoute } from './routes/openapi.ts';
import { projectRoutes } from './routes/projects.ts';
import { poolRoutes } from './routes/pool.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { queueRoutes } from './routes/queue.ts';
import { taskRoutes } from './routes/tasks.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { createApprovalService } from './approvals/service.ts';
import { approvalsTable } from './store/approvals.ts';
import type { DataLock } from './runtime/lock.ts';
import { createLimiter } from './runtime/limiter.ts';
import { emptyScratch } from './runtime/scratch.ts';
import { once } from './runtime/once.ts';
import type { Logger } from './runtime/log.ts';
import { built, VERSION } from './runtime/root.ts';
import type { Settings } from './runtime/settings.ts';
import { createSessionService } from './sessions/service.ts';
import { createSpawner } from './sessions/spawner.ts';
import { createConfine } from './sessions/confine.ts';
import { checkSandbox } from './sandbox/check.ts';
import { git } from './git/run.ts';
import { patientReads, type Store } from './store/store.ts';
import { portLeasesTable } from './store/port-leases.ts';
import { projectsTable } from './store/projects.ts';
import { sessionsTable } from './store/sessions.ts';
import { queueTable } from './store/queue.ts';
import { createMergeQueue } from './landing/queue.ts';
import { createAutomations } from './automations/service.ts';
import { automationRoutes } from './routes/automations.ts';
import { automationsTable } from './store/automations.ts';
import { automationRunsTable, lastRunIn } from './store/automation-runs.ts';
import { createGitHub } from './github/client.ts';
import { issueWriter } from './github/issues.ts';
import { DEFAULT_API_URL } from './github/repo.ts';
import { createTokenSource } from './github/token.ts';
import { createIntake } from './intake/service.ts';
import { intakeRoutes } from './routes/intake.ts';
import { intakesTable } from './store/intakes.ts';
import { intakeItemsTable } from './store/intake-items.ts';
import { createPulls } from './pulls/service.ts';
import { DEFAULT_POLL_MS } from './pulls/follow.ts';
import { pullRoutes } from './routes/pulls.ts';
import { pullRequestsTable } from './store/pull-requests.ts';
import { createLanding } from './landing/service.ts';
import { eventsTable } from './store/events.ts';
import { hostsTable } from './store/hosts.ts';
import { hostIdOf, startHeartbeat } from './hosts/host.ts';
import { hostRoutes } from './routes/hosts.ts';
import { createSshHosts } from './ssh/hosts.ts';
import { hostsFilePath } from './client/hosts-file.ts';
import { sshDir } from './client/ssh.ts';
import { createCommands } from './hosts/commands.ts';
import { createPlacement } from './hosts/placement.ts';
import { commandsTable } from './store/commands.ts';
import { homedir, hostname } from 'node:os';
import { createEventBus } from './events/bus.ts';
import { createDependencies } from './landing/dependencies.ts';
import { createEventFeed } from './events/feed.ts';
import { createTeamReader, type TeamReader } from './events/team.ts';
import { createTeamWakes } from './store/wakes.ts';
import { createHooks, stopLeftHooks } from './events/hooks.ts';
import { eventRoutes } from './routes/events.ts';
import { terminalSockets } from './routes/terminal.ts';
import { checkPty } from './terminal/check.ts';
import { setupLogTable } from './store/setup-log.ts';
import { tasksTable } from './store/tasks.ts';
import { createJournal } from './journal/creation.ts';
import { createTaskGate } from './tasks/gate.ts';
import { createLandingJournal } from './journal/landing.ts';
import { createPool } from './tasks/threads.ts';
import { createPortAllocator } from './tasks/ports.ts';
import { createTaskReader, withPresence } from './tasks/read.ts';
import { createTaskService } from './tasks/service.ts';

// Store reads of event and output streams at a time, all streams together: a request that is
// not a stream then waits behind at most this many of their pages.
const STREAM_READS = 2;

export interface Daemon {
  readonly socketPath: string;
  /** null when the TCP front is off. */
  readonly port: number | null;
  close(): Promise<void>;
}

// Starts config watcher, pool, sessions, tasks, API and front, in that order, with the agents
// the settings name (made and checked with them before anything starts) on the store opening
// under the lock main.ts took: both are closed with the rest, on a failed start too.
export async function startDaemon(settings: Settings, agents: Agents, log: Logger, first: { lock: DataLock; store: Promise<Store> }): Promise<Daemon> {
  const started: Array<{ name: string; close(): Promise<void> }> = [];
  const startedAt = new Date().toISOString();
  const closeAll = async () => {
    for (const part of started.splice(0).reverse()) {
      try {
        log.debug({ part: part.name }, 'closing');
        await part.close();
      } catch (err) {
        log.error({ err, part: part.name }, 'error while closing');
      }
    }
  };
  const child = (module: string) => log.child({ module });

  try {
    const { lock } = first;
    started.push({ name: 'lock', close: () => lock.close() });
    // While the store opens, this thread makes the parts that need none of it (their schemas
    // compiled, the pool, the SSH hosts).
    started.push({ name: 'store', close: () => first.store.then((s) => s.close(), () => {}) });

    // Whether this machine can confine agent sessions (DESIGN §18), checked for real (a namespace
    // made) once, while the store opens.
    const sandboxCheck = checkSandbox({ path: process.env.PATH ?? '' });
    // Whether the PTY helper can spawn here (DESIGN §21), checked for real once the API listens
    // (the check starts a program, which the store's opening would share the CPU with), or at the
    // first terminal session before that: only terminal sessions wait for it.
    const ptyCheck = once(checkPty);

    const configs = createProjectConfigs({ log: child('config') });
    started.push({ name: 'configs', close: () => configs.close() });

    const pool = createPool();
    started.push({ name: 'pool', close: () => pool.close() });

    // The saved SSH hosts (DESIGN §14.1): their masters and forwards are the user's, shared with
    // the CLI's `--host`, in the user's runtime folder.
    const sshHosts = createSshHosts({
      hostsFile: hostsFilePath(settings),
      ssh: { runtimeDir: sshDir(process.env, process.getuid?.() ?? 0), env: process.env },
      log: child('ssh'),
    });
    started.push({ name: 'ssh hosts', close: () => sshHosts.close() });

    const store = await first.store;

    // Every change goes to the store with its event; committed events go to the bus (DESIGN §11):
    // on a shared store through the team reader, which reads every host's (DESIGN §14.2).
    const hostId = hostIdOf(settings.dataDir);
    const bus = createEventBus();
    let team: TeamReader | null = null;
    const eventRows = eventsTable(store.db, (events) => (team ? team.recorded(events) : bus.publish(events)), { hostId, shared: store.shared });
    bus.begin(await eventRows.lastSeq());
    if (store.shared) {
      const reader = (team = createTeamReader({ bus, events: eventRows, store, log: child('events') }));
      started.push({ name: 'team stream', close: () => reader.close() });
    }
    // This daemon as a host of the store (DESIGN §14.2): online from here, offline once closed.
    const hostRows = hostsTable(store.db, eventRows);
    const acceptRemote = settings.config.accept_remote ?? true;
    const heartbeat = await startHeartbeat({ hosts: hostRows, id: hostId, name: settings.config.host_name ?? hostname(), version: VERSION, acceptRemote, log: child('hosts') });
    started.push({ name: 'heartbeat', close: () => heartbeat.close() });
    const projectRows = projectsTable(store.db, eventRows);
    const taskRows = tasksTable(store.db, eventRows, withPresence);
    const projects = createProjectService({ projects: projectRows, hostId, countLiveTasks: (id) => taskRows.countLive(id), configs });
    const read = createTaskReader({ tasks: taskRows, getProject: projects.get, hostId });

    // Session starts and archives of one task take turns through it (both services hold it).
    const gate = createTaskGate();
    const sessionRows = sessionsTable(store.db, eventRows);
    const sandbox = await sandboxCheck;
    if (!sandbox.ok) {
      log.warn({ missing: sandbox.missing }, `agent sessions will run unconfined ("sandbox": "auto") or be refused ("sandbox": true): ${sandbox.detail}`);
    }
    const confine = createConfine({
      check: sandbox,
      home: process.env.HOME || homedir(),
      grove: { dataDir: settings.dataDir, configFile: settings.configFile, socketPath: settings.socketPath },
      userSetting: settings.config.sandbox,
      projectPaths: async () => (await projectRows.listOfHost(hostId)).map((p) => p.path),
    });
    const spawner = createSpawner({ log: child('sessions') });
    started.push({ name: 'spawner', close: () => spawner.close() });
    const sessions = createSessionService({
      gate,
      sessions: sessionRows,
      getTask: read.get,
      getProject: projects.get,
      configs,
      agents,
      defaultAgent: settings.config.default_agent,
      defaultMode: settings.config.default_mode,
      defaultTimeoutS: settings.config.timeout_s,
      autoResume: { enabled: settings.config.auto_resume ?? true, prompt: settings.config.resume_prompt ?? 'continue' },
      dataDir: settings.dataDir,
      confine,
      spawner,
      pty: ptyCheck,
      // The approval service (below) is made after the sessions: their sockets are opened later.
      sockets: { open: (id, p) => sessionSockets.open(id, p), close: (id) => sessionSockets.close(id) },
      // Sessions end only once they are followed, after the task service below is made.
      checkpoint: (taskId, sessionId) => landing.review.checkpoint(taskId, sessionId),
      log: child('sessions'),
    });
    started.push({ name: 'sessions', close: () => sessions.close() });
    // A session's lines and end, once stored here, wake its followers on every host (DESIGN §14.2).
    const outputWakes = createTeamWakes({ store, channel: 'grove_output', tellOn: [sessions.output, sessions.ended], log: child('sessions') });
    started.push({ name: 'output wakes', close: () => outputWakes.close() });

    // Made before sessions re-attach: a session found ended then expires its approvals (DESIGN §15).
    const approvals = createApprovalService({
      approvals: approvalsTable(store.db, eventRows),
      getSession: sessionRows.get,
      getTask: read.get,
      getProject: projects.get,
      configs,
      userAllow: settings.config.allow ?? [],
      userTimeoutS: settings.config.approval_timeout_s,
      committed: bus.committed,
      hostId,
      log: child('approvals'),
    });
    started.push({ name: 'approvals', close: () => approvals.close() });
    // Each confined session's own socket (DESIGN §18): its bridges get the API's two approval
    // routes and nothing else. Made before sessions re-attach, which open theirs again.
    const approvalApi = approvalRoutes({ approvals });
    const sessionSockets = createSessionSockets({ routes: approvalApi, approvals, log: child('session sockets') });
    started.push({ name: 'session sockets', close: () => sessionSockets.closeAll() });

    const tasks = createTaskService({
      tasks: taskRows,
      read,
      killSessions: sessions.killAllOfTask,
      gate,
      setupLog: setupLogTable(store.db),
      teardownLog: setupLogTable(store.db, 'teardown'),
      getProject: projects.get,
      localProjects: () => projectRows.listOfHost(hostId),
      pool,
      ports: createPortAllocator({ leases: portLeasesTable(store.db), range: settings.portRange }),
      configs,
      setupTimeoutS: settings.setupTimeoutS,
      gitTimeoutS: settings.gitTimeoutS,
      onReady: (id) => sessions.autostart(id),
      journal: createJournal(path.join(settings.dataDir, 'journal')),
      log: child('tasks'),
    });
    started.push({ name: 'tasks', close: () => tasks.close() });
    const landing = createLanding({
      tasks: taskRows,
      read,
      getProject: projects.get,
      pool,
      perProject: tasks.perProject,
      perTask: tasks.perTask,
      gitTimeoutS: settings.gitTimeoutS,
      setupTimeoutS: settings.setupTimeoutS,
      landingJournal: createLandingJournal(path.join(settings.dataDir, 'journal')),
      scratch: emptyScratch(settings.dataDir),
      gate,
      runningAgent: (taskId) => sessions.runningAgent(taskId),
      log: child('landing'),
    });
    // A setup's progress, once stored here, wakes its followers on every host (DESIGN §14.2).
    const setupWakes = createTeamWakes({ store, channel: 'grove_setup', tellOn: [tasks.setupProgress], log: child('tasks') });
    started.push({ name: 'setup wakes', close: () => setupWakes.close() });

    // What a stopped daemon left: watched configs, unfinished creations, setups and landings, live sessions.
    for (const p of await projectRows.listOfHost(hostId)) configs.watch(p.path); // only this host has their folders
    await projects.refreshRepositories();
    // This host's only: another host's rows keep their state until it comes back (DESIGN §14.2).
    await tasks.recover(hostId);
    await landing.recover();
    await sessions.reattach(hostId);
    await approvals.recover();
    // Waiting first sessions and stacked tasks (DESIGN §17): what merged or was archived while
    // this daemon was down is acted on now, and every host's events wake it from here on.
    const dependencies = createDependencies({
      tasks: taskRows,
      getProject: projects.get,
      create: tasks.create,
      restack: landing.review.restack,
      sessions,
      committed: bus.committed,
      hostId,
      log: child('dependencies'),
    });
    started.push({ name: 'dependencies', close: () => dependencies.close() });
    await dependencies.start();
    // After recovery: slots a stop left half made are failed by then, and are made again.
    await tasks.warm.start();
    // After the landing journal put right what a stop cut short: the merge queues go on (DESIGN §17).
    const queueRows = queueTable(store.db, eventRows);
    const mergeQueue = createMergeQueue({
      queue: queueRows,
      read,
      getProject: projects.get,
      localProjects: () => projectRows.listOfHost(hostId),
      configs,
      review: landing.review,
      pool,
      sessions,
      setupTimeoutS: settings.setupTimeoutS,
      log: child('queue'),
    });
    started.push({ name: 'merge queue', close: () => mergeQueue.close() });
    await mergeQueue.start();
    // GitHub as configured (DESIGN §20), its token read when a request needs it: pull requests,
    // which automations and intake open, and intake's issues.
    const githubConfig = settings.config.github ?? {};
    const token = createTokenSource({ command: githubConfig.token_command });
    const github = createGitHub({ apiUrl: githubConfig.api_url ?? DEFAULT_API_URL, token, timeoutMs: (githubConfig.timeout_s ?? 30) * 1000, log: child('github') });
    started.push({ name: 'github', close: () => github.close() });
    const pulls = createPulls({
      pulls: pullRequestsTable(store.db, eventRows),
      github,
      writer: () => issueWriter(github),
      tasks: { get: read.get },
      getProject: projects.get,
      review: {
        changes: (taskId) => landing.review.changes(taskId),
        commit: (taskId, message) => landing.review.commit(taskId, message),
        push: (taskId, remote) => landing.review.push(taskId, remote),
      },
      sessions,
      archive: (taskId) => tasks.archive(taskId, true),
      hostId,
      intervalMs: (githubConfig.pr_poll_s ?? DEFAULT_POLL_MS / 1000) * 1000,
      log: child('pulls'),
    });
    started.push({ name: 'pull requests', close: () => pulls.close() });
    pulls.start();
    // Automations (DESIGN §19): after sessions re-attached, so that the runs a stop left follow
    // their sessions; the clock starts last.
    const automations = createAutomations({
      automations: automationsTable(store.db, eventRows, lastRunIn),
      runs: automationRunsTable(store.db, eventRows),
      getProject: projects.get,
      pool,
      setupTimeoutS: settings.setupTimeoutS,
      create: dependencies.create,
      sessions: { get: sessions.get, ended: sessions.ended },
      checkSession: (projectPath, session) => void sessions.planFirst(projectPath, session),
      configs,
      localProjects: () => projectRows.listOfHost(hostId),
      changes: (taskId) => landing.review.changes(taskId),
      commit: (taskId, message) => landing.review.commit(taskId, message),
      archive: (taskId) => tasks.archive(taskId, true),
      queue: mergeQueue,
      openPr: (taskId) => pulls.ensure(taskId),
      hostId,
      log: child('automations'),
    });
    started.push({ name: 'automations', close: () => automations.close() });
    await automations.start();
    const intake = createIntake({
      intakes: intakesTable(store.db),
      items: intakeItemsTable(store.db, eventRows),
      github,
      token,
      writer: () => issueWriter(github),
      getProject: projects.get,
      localProjects: () => projectRows.listOfHost(hostId),
      configs,
      checkSession: (projectPath, session) => void sessions.planFirst(projectPath, session),
      create: dependencies.create,
      tasks: { get: read.get },
      sessions: { get: sessions.get, ended: sessions.ended },
      changes: (taskId) => landing.review.changes(taskId),
      commit: (taskId, message) => landing.review.commit(taskId, message),
      queue: { add: (projectId, body) => mergeQueue.add(projectId, body), has: async (taskId) => (await queueRows.get(taskId)) !== null },
      openPr: (taskId) => pulls.ensure(taskId),
      hostId,
      log: child('intake'),
    });
    started.push({ name: 'intake', close: () => intake.close() });
    await intake.start();

    // Open streams wait while the store is unreachable, and read on once it is back.
    const streamReads = patientReads(createLimiter(STREAM_READS));
    const feed = createEventFeed({ bus, events: eventRows, streamReads, log: child('events'), stallMs: settings.eventStallMs });
    started.push({ name: 'events', close: () => feed.close() });
    const hookRuns = path.join(settings.dataDir, 'hooks');
    await stopLeftHooks(hookRuns, child('hooks'));
    const hooks = createHooks({ hooks: settings.config.hooks ?? [], bus, hostId, runDir: hookRuns, log: child('hooks') });
    started.push({ name: 'hooks', close: () => hooks.close() });

    let port: number | null = null;
    const routes = [
      ...healthRoutes({ version: VERSION, startedAt, socket: settings.socketPath, port: () => port, lastEventSeq: bus.newest, hostId, shared: store.shared }),
      // A project added or removed has its warm pool made or removed with it (DESIGN §16).
      ...projectRoutes({
        projects: {
          ...projects,
          add: async (input) => {
            const p = await projects.add(input);
            void tasks.warm.sync(p.id);
            void automations.applyFile(p.id);
            void intake.applyFile(p.id);
            return p;
          },
          remove: (id) => projects.remove(id, () => tasks.warm.removeAll(id)),
        },
      }),
      ...poolRoutes({ warm: tasks.warm }),
      ...queueRoutes({ queue: mergeQueue }),
      ...automationRoutes({ automations }),
      ...intakeRoutes({ intake }),
      ...pullRoutes({ pulls }),
      ...taskRoutes({ tasks, review: landing.review, create: dependencies.create, setupWakes, place: createPlacement({ hosts: hostRows, listProjects: () => projects.list(), hostId }), issues: intake }),
      ...sessionRoutes({ sessions, agents, streamReads, outputWakes }),
      ...approvalApi,
      ...eventRoutes({ feed }),
      ...hostRoutes({ hosts: hostRows, ssh: sshHosts }),
    ];
    routes.push(...openApiRoute({ routes, version: VERSION }), ...uiRoutes({ dir: built('ui') }));
    // On a shared store, a request on another host's resource runs there (DESIGN §14.2).
    const commands = store.shared
      ? createCommands({ store, rows: commandsTable(store.db), hosts: hostRows, hostId, acceptRemote, socketPath: settings.socketPath, log: child('commands') })
      : null;
    if (commands) started.push({ name: 'commands', close: () => commands.close() });
    const apiHandler = createApiHandler({ routes, log: child('api'), ...(commands ? { remote: commands } : {}) });
    // /api/hosts/NAME/… goes to that SSH host; the TCP front's guards ran before it came here.
    const handler: typeof apiHandler = (req, res) => {
      if (!sshHosts.handle(req, res)) apiHandler(req, res);
    };

    // Terminal sessions' WebSockets (DESIGN §21), closed before the socket: each client is told to come back.
    const terminals = terminalSockets({ sessions: sessionRows, dataDir: settings.dataDir, hostId, ended: sessions.ended, log: child('terminals') });
    const api = await listenOnSocket({ socketPath: settings.socketPath, handler, log: child('api'), upgrade: terminals.upgrade });
    started.push({ name: 'api', close: () => api.close() });
    if (commands) {
      await commands.start();
      started.push({ name: 'command loop', close: () => commands.stop() });
    }
    // Before the socket closes: a bridge's long poll is answered now rather than cut after the grace.
    started.push({ name: 'approval waits', close: () => approvals.close() });

    if (settings.port !== null) {
      const front = await startFront({ port: settings.port, socketPath: settings.socketPath, log: child('front') });
      started.push({ name: 'front', close: () => front.close() });
      port = front.port;
    }
    // Closed first: each client is told to come back (1001) through the front while it still forwards.
    started.push({ name: 'terminals', close: () => terminals.close() });

    log.info({ version: VERSION, socket: settings.socketPath, port, data: settings.dataDir }, 'grove daemon ready');
    void ptyCheck().then((r) => r.ok || log.warn(`terminal sessions cannot run on this machine: ${r.detail}`));
    return { socketPath: settings.socketPath, port, close: once(closeAll) };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
