// One poll of a project's watch (DESIGN §20): the repository's open issues with the label, and for
// each one not yet dealt with, who added the label and whether they may: taken or refused, once
// per label event. Conditional requests make a quiet repository's poll one 304.
import type { GitHub } from '../github/client.ts';
import type { Logger } from '../runtime/log.ts';
import type { IntakeItemsTable, NewItem } from '../store/intake-items.ts';
import type { StoredIntake } from '../store/intakes.ts';

interface GhUser {
  login: string;
}
export interface GhIssue {
  number: number;
  title: string;
  body?: string | null;
  html_url: string;
  updated_at: string;
  user?: GhUser | null;
  pull_request?: unknown;
}
interface GhEvent {
  id: number;
  event: string;
  actor?: GhUser | null;
  label?: { name: string } | null;
}

// Write, maintain and admin may ask grove for work; triage and read may not.
const TRUSTED = new Set(['admin', 'maintain', 'write']);

export interface PollDeps {
  github: Pick<GitHub, 'get' | 'list'>;
  items: Pick<IntakeItemsTable, 'find' | 'refuse'>;
  /** takes a trusted label event: claims it and makes its task */
  take: (watch: StoredIntake, item: Omit<NewItem, 'id' | 'host_id'>, issue: GhIssue) => Promise<void>;
  newItemId: () => string;
  hostId: string;
  log: Logger;
}

export const ownerRepo = (repository: string) => {
  const [owner, repo] = repository.split('/') as [string, string];
  return { owner, repo };
};

// `seen`: the issues dealt with, by number, with the `updated_at` they had then (a label event
// changes it): those are not read again until they change. Kept by the caller between polls.
export async function pollOnce(deps: PollDeps, watch: StoredIntake, seen: Map<number, string>): Promise<{ changed: boolean }> {
  const where = ownerRepo(watch.repository);
  const { data: issues, changed } = await deps.github.list<GhIssue>('/repos/{owner}/{repo}/issues', { ...where, labels: watch.label, state: 'open' });
  const open = new Set(issues.map((i) => i.number));
  for (const n of seen.keys()) if (!open.has(n)) seen.delete(n);
  for (const issue of issues) {
    if (seen.get(issue.number) === issue.updated_at) continue;
    await consider(deps, watch, issue);
    seen.set(issue.number, issue.updated_at);
  }
  return { changed };
}

async function consider(deps: PollDeps, watch: StoredIntake, issue: GhIssue): Promise<void> {
  const where = ownerRepo(watch.repository);
  const { data: events } = await deps.github.list<GhEvent>('/repos/{owner}/{repo}/issues/{issue_number}/events', { ...where, issue_number: issue.number });
  const wanted = watch.label.toLowerCase();
  const labelled = events.filter((e) => e.event === 'labeled' && e.label?.name.toLowerCase() === wanted).at(-1);
  if (!labelled) return; // carried from before events were kept: nothing says who added it
  const labelEvent = String(labelled.id);
  if (await deps.items.find(watch.repository, issue.number, labelEvent)) return;
  const actor = labelled.actor?.login ?? null;
  const item = { project_id: watch.project_id, repository: watch.repository, number: issue.number, label_event: labelEvent, title: issue.title, url: issue.html_url, actor };
  const refuse = async (reason: string) => {
    if (await deps.items.refuse({ ...item, id: deps.newItemId(), host_id: deps.hostId }, reason)) {
      deps.log.info({ project: watch.project_id, repository: watch.repository, issue: issue.number, actor, reason }, 'intake refused an issue');
    }
  };
  if (issue.pull_request !== undefined) return refuse('it is a pull request: intake takes issues, and never checks out a pull request');
  if (actor === null) return refuse('GitHub names no one as having added the label');
  const role = await permissionOf(deps, watch.repository, actor);
  if (!TRUSTED.has(role)) return refuse(`@${actor}, who added the label, has ${role === 'none' ? 'no' : role} permission on ${watch.repository}: write, maintain or admin is needed`);
  await deps.take(watch, item, issue);
}

// The actor's role on the repository (admin, maintain, write, triage, read or none).
async function permissionOf(deps: PollDeps, repository: string, login: string): Promise<string> {
  try {
    const { data } = await deps.github.get<{ permission?: string; role_name?: string }>('/repos/{owner}/{repo}/collaborators/{username}/permission', { ...ownerRepo(repository), username: login });
    return data.role_name ?? data.permission ?? 'none';
  } catch (err) {
    if ((err as { kind?: string }).kind === 'not_found') return 'none';
    throw err;
  }
}
