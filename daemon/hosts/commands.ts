// The owner acts (DESIGN §14.2): a request on another host's resource is written as a command
// row, the owner woken (NOTIFY, with a poll: a notification can be missed), run there through its
// own API as a local request, and answered with the owner's status and body.
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { GroveError, PROBLEM_CONTENT_TYPE, problemBody } from '../errors.ts';
import { COMMAND_HEADER, type OwnerKind, type Remote } from '../http/route.ts';
import { once } from '../runtime/once.ts';
import type { Logger } from '../runtime/log.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import { createRegistry } from '../runtime/registry.ts';
import { retrying, type RetryPolicy } from '../runtime/retry.ts';
import { ANSWERED_CHANNEL, COMMANDS_CHANNEL, TAKE_WITHIN_S, type Command, type CommandAnswer, type CommandsTable } from '../store/commands.ts';
import type { HostsTable } from '../store/hosts.ts';
import type { Store } from '../store/store.ts';

// How often a waiting requester and the owner's loop read the store when no notification came.
const POLL_MS = 1000;
// Storing an answer: a try each POLL_MS, for about half a minute.
const ANSWER_RETRY: RetryPolicy = { delayMs: POLL_MS, tries: 31 };

// Every this many polls, the owner deletes its old commands.
const PRUNE_EVERY = 60;

// Of the owner's answer headers, those that describe its body to the client.
const kept = (name: string) => name === 'content-type' || name === 'allow' || name.startsWith('grove-');

export interface Commands extends Remote {
  /** the owner's loop: abandons what its last run took, then takes commands until stopped */
  start(): Promise<void>;
  /** stops taking commands (before the API socket closes) */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export function createCommands(deps: {
  store: Store;
  rows: CommandsTable;
  hosts: HostsTable;
  hostId: string;
  acceptRemote: boolean;
  socketPath: string;
  log: Logger;
}): Commands {
  const { store, rows, hosts, hostId, log } = deps;
  const waiting = createRegistry<string, () => void>();
  const stopAnswers = store.listen(ANSWERED_CHANNEL, (id) => {
    for (const wake of id === null ? waiting.all() : waiting.get(id)) wake();
  });

  // Until the command's answer is notified, or POLL_MS.
  function nap(id: string): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, POLL_MS);
      const stop = waiting.add(id, done);
      function done() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  }

  async function nameOf(id: string): Promise<string> {
    return (await hosts.get(id))?.name ?? id;
  }

  async function forward(target: string, req: { method: string; path: string; headers: Record<string, string>; body: string | null }): Promise<CommandAnswer> {
    const host = await hosts.get(target);
    if (!host) throw new GroveError('HOST_OFFLINE', `the owning host ${target} has never joined the store`);
    if (!host.accept_remote) throw new GroveError('REMOTE_REFUSED', `host ${host.name} does not run requests from other hosts (accept_remote is false); ask there`);
    if (!host.online) throw new GroveError('HOST_OFFLINE', `host ${host.name} is offline; nothing was sent`);
    const id = randomUUID();
    await rows.insert({ id, host_id: target, from_host_id: hostId, ...req });
    log.info({ command: id, host: host.name, method: req.method, path: req.path }, 'forwarded to the owning host');
    await store.notify(COMMANDS_CHANNEL, target);
    for (;;) {
      if (closed) throw new GroveError('UNAVAILABLE', 'this daemon is stopping; the request may still run on its host');
      const c = (await rows.get(id))!;
      switch (c.status) {
        case 'done':
          return c.answer!;
        case 'abandoned':
          throw new GroveError('HOST_OFFLINE', `host ${host.name} stopped while running the request; it may have run in part`);
        case 'withdrawn':
          throw new GroveError('HOST_OFFLINE', `host ${host.name} did not take the request in ${TAKE_WITHIN_S} s; it was withdrawn and will not run`);
        case 'pending':
          if (await rows.withdraw(id)) {
            log.warn({ command: id, host: host.name }, 'the owning host did not take the command; withdrawn');
            await hosts.unresponsive(target);
            throw new GroveError('HOST_OFFLINE', `host ${host.name} did not take the request in ${TAKE_WITHIN_S} s; it was withdrawn and will not run`);
          }
          break;
        case 'taken':
          if (!(await hosts.get(target))?.online) {
            throw new GroveError('HOST_OFFLINE', `host ${host.name} went offline while running the request; it may have run`);
          }
          break;
      }
      await nap(id);
    }
  }

  // ---- the owner's side ----
  const local = new Pool('http://localhost', { socketPath: deps.socketPath, connections: 16, headersTimeout: 0, bodyTimeout: 0 });
  const runs = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let stopCommands: (() => void) | null = null;
  let failing = false;
  let stopped = false;
  let closed = false;

  function problem(code: 'REMOTE_REFUSED' | 'UNAVAILABLE', detail: string): CommandAnswer {
    const body = problemBody(code, detail);
    return { status: body.status, headers: { 'content-type': PROBLEM_CONTENT_TYPE }, body: Buffer.from(JSON.stringify(body)) };
  }

  // The command run through this daemon's own API: the same validation, guards and handlers as
  // a request of its own user; the header keeps it from being forwarded again.
  async function runLocally(c: Command): Promise<CommandAnswer> {
    if (!deps.acceptRemote) return problem('REMOTE_REFUSED', 'this host does not run requests from other hosts (accept_remote is false)');
    try {
      const res = await local.request({
        method: c.method as 'GET',
        path: c.path,
        headers: { ...c.headers, [COMMAND_HEADER]: c.id },
        body: c.body,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && kept(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      return { status: res.statusCode, headers, body };
    } catch (err) {
      log.warn({ err, command: c.id }, 'a command could not be run through the API socket');
      return problem('UNAVAILABLE', 'the owning host could not run the request through its API; it may have run in part');
    }
  }

  async function run(c: Command): Promise<void> {
    log.info({ command: c.id, from: c.from_host_id, method: c.method, path: c.path }, 'running a command of another host');
    const answer = await runLocally(c);
    // The answer must reach the store, or the requester waits until this host is offline.
    await retrying(
      async () => {
        if (!(await rows.answer(c.id, answer))) log.warn({ command: c.id }, 'a command was answered after it was abandoned');
        await store.notify(ANSWERED_CHANNEL, c.id);
      },
      { policy: ANSWER_RETRY, retryable: () => !stopped },
    ).catch((err: unknown) => log.warn({ err, command: c.id }, 'a command\'s answer could not be stored'));
  }

  // Takes every command waiting for this host, one claim at a time; each runs without holding
  // up the next claim (a long merge must not leave a session start to be withdrawn). One poll
  // at a time; a wake during one makes one more.
  const poller = createCoalescer<void>(async () => {
    try {
      await hosts.polled(hostId);
      for (;;) {
        const c = await rows.take(hostId);
        if (!c) break;
        const p = run(c).finally(() => runs.delete(p));
        runs.add(p);
      }
      failing = false;
    } catch (err) {
      // Once per outage: the heartbeat says the rest.
      if (!failing) log.warn({ err }, 'reading the command queue failed; trying again each second');
      failing = true;
    }
  });
  const poll = (): void => void poller.run();

  return {
    async elsewhere(kind: OwnerKind, id: string) {
      const owner = await rows.ownerOf(kind, id);
      return owner !== null && owner !== hostId ? owner : null;
    },
    nameOf,
    forward,
    async start() {
      const abandoned = await rows.abandonTaken(hostId);
      if (abandoned > 0) log.warn({ abandoned }, 'commands taken by the last run and never answered are abandoned, not run again');
      stopCommands = store.listen(COMMANDS_CHANNEL, (target) => {
        if (target === null || target === hostId) poll();
      });
      let ticks = 0;
      const tick = () => {
        poll();
        if (ticks++ % PRUNE_EVERY === 0) rows.prune(hostId).catch((err: unknown) => log.warn({ err }, 'pruning old commands failed'));
        timer = setTimeout(tick, POLL_MS);
      };
      tick();
    },
    // Before the API socket closes: nothing more is taken. Commands running end with the API's
    // own requests (its close cuts them after a grace), so a long one does not hold the stop.
    stop: once(async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      stopCommands?.();
      await poller.close();
    }),
    close: once(async () => {
      closed = true;
      stopAnswers();
      for (const wake of waiting.all()) wake();
      await Promise.all(runs);
      await local.close();
    }),
  };
}
