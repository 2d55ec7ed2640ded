// The owner's side of forwarding (DESIGN §14.2): its loop takes the commands written for this
// host (woken by a NOTIFY, with a poll: a notification can be missed), runs each through its own
// API as a local request, and stores the answer with the owner's status and body. The
// requester's side is requester.ts.
import { Pool } from 'undici';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors.ts';
import { COMMAND_HEADER } from '../http/route.ts';
import { once } from '../runtime/once.ts';
import type { Logger } from '../runtime/log.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import { retrying, type RetryPolicy } from '../runtime/retry.ts';
import { ANSWERED_CHANNEL, COMMAND_POLL_MS as POLL_MS, COMMANDS_CHANNEL, type Command, type CommandAnswer, type CommandsTable } from '../store/commands.ts';
import type { HostsTable } from '../store/hosts.ts';
import type { Store } from '../store/store.ts';

// Storing an answer: a try each POLL_MS, for about half a minute.
const ANSWER_RETRY: RetryPolicy = { delayMs: POLL_MS, tries: 31 };

// Every this many polls, the owner deletes its old commands.
const PRUNE_EVERY = 60;

// Of the owner's answer headers, those that describe its body to the client.
const kept = (name: string) => name === 'content-type' || name === 'allow' || name.startsWith('grove-');

export interface Owner {
  /** the owner's loop: abandons what its last run took, then takes commands until stopped */
  start(): Promise<void>;
  /** stops taking commands (before the API socket closes) */
  stop(): Promise<void>;
  /** waits for the commands running, then closes the connection to the API socket */
  close(): Promise<void>;
}

export function createOwner(deps: { store: Store; rows: CommandsTable; hosts: HostsTable; hostId: string; acceptRemote: boolean; socketPath: string; log: Logger }): Owner {
  const { store, rows, hosts, hostId, log } = deps;
  const local = new Pool('http://localhost', { socketPath: deps.socketPath, connections: 16, headersTimeout: 0, bodyTimeout: 0 });
  const runs = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let stopCommands: (() => void) | null = null;
  let failing = false;
  let stopped = false;

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
      await Promise.all(runs);
      await local.close();
    }),
  };
}
