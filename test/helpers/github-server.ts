// A stand-in for GitHub's REST API v3 on 127.0.0.1 (a free port), for the tests of grove's GitHub
// intake and pull requests: Octokit takes `url` as its baseUrl, as for a GitHub Enterprise host.
// Issues, pull requests, labels, comments, events, reviews and check runs live in memory; branch
// tips are read with git from a real bare repository per repo. Answers have GitHub's shapes and
// headers (auth, rate limit, ETag/304, Link pagination), and faults can be asked for.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once as onceEvent } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { once } from '../../daemon/runtime/once.ts';

export type Role = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';
export type ReviewState = 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
export type CheckStatus = 'queued' | 'in_progress' | 'completed';
export type Conclusion = null | 'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required';

export interface GitHubOptions {
  /** token -> login; default `{ ghp_test_token: 'grove-bot' }` */
  tokens?: Record<string, string>;
  /** requests per window; default 5000 */
  rateLimit?: number;
  /** the web host of html_url and clone_url; default the server's own URL (as GitHub Enterprise serves its pages and API on one host) */
  htmlBase?: string;
}

export interface RecordedRequest {
  method: string;
  /** the path without the query, and without an `/api/v3` prefix */
  path: string;
  query: Record<string, string>;
  /** the status answered; 0 for a request left hanging */
  status: number;
  ifNoneMatch?: string;
  /** the raw Authorization header, as sent */
  authorization?: string;
}

/** How faulted requests are answered: a status (with GitHub's body for it unless given), or never. */
export type Fault = { status: number; times?: number; body?: string | object; headers?: Record<string, string> } | { hang: true; times?: number };

// What the server keeps. A user is named by login; times are GitHub's ISO stamps.
export type User = { login: string; id: number; type: 'User' | 'Bot' };
export type Comment = { id: number; body: string; user: string; createdAt: string; updatedAt: string };
export type IssueEvent = { id: number; event: string; actor: string; label?: string; createdAt: string };
export type Review = { id: number; user: string; body: string; state: ReviewState; submittedAt: string; commitId: string };
export type ReviewComment = { id: number; reviewId: number; user: string; body: string; path: string; line: number; commitId: string; createdAt: string };
export interface PullData {
  id: number;
  head: string;
  base: string;
  headSha: string;
  baseSha: string;
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  reviews: Review[];
  reviewComments: ReviewComment[];
}
/** An issue, or a pull request (then `pull` is set): they share one number sequence per repo. */
export interface Issue {
  id: number;
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  labels: string[];
  user: string;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  comments: Comment[];
  events: IssueEvent[];
  pull?: PullData;
}
export interface CheckRun {
  id: number;
  name: string;
  headSha: string;
  status: CheckStatus;
  conclusion: Conclusion;
  startedAt: string;
  completedAt: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
}

type Label = { id: number; name: string; color: string };
interface Repo {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  bare?: string;
  defaultBranch: string;
  private: boolean;
  labels: Map<string, Label>; // by lower-cased name: GitHub's label names ignore case
  issues: Map<number, Issue>;
  roles: Map<string, Role>;
  checkRuns: CheckRun[];
  // bumped by every change; hashed into ETags (see `etagOf`)
  revision: number;
}

export interface GitHubServer {
  /** `http://127.0.0.1:<port>`; the same routes answer under `<url>/api/v3` */
  url: string;
  /** token -> login, mutable: a token added here is accepted from the next request */
  tokens: Record<string, string>;
  /** every request, in arrival order */
  requests: RecordedRequest[];
  clearRequests(): void;
  close(): Promise<void>;
  setRateLimit(opts: { remaining?: number; limit?: number; resetAt?: Date }): void;
  /** the next `times` (default: all) requests matching answer `how` instead, until the returned
   * function ends the fault */
  fail(match: { method?: string; path: RegExp }, how: Fault): () => void;
  addRepo(fullName: string, opts?: { bare?: string; defaultBranch?: string; private?: boolean }): void;
  addUser(login: string, opts?: { id?: number; type?: 'User' | 'Bot' }): User;
  setPermission(fullName: string, login: string, role: Role): void;
  addIssue(fullName: string, opts: { title: string; body?: string; user?: string }): number;
  label(fullName: string, number: number, name: string, actor?: string): void;
  unlabel(fullName: string, number: number, name: string, actor?: string): void;
  comment(fullName: string, number: number, opts: { body: string; user: string }): Comment;
  closeIssue(fullName: string, number: number, actor?: string): void;
  /** a copy of the issue (or pull request) as it is now */
  issue(fullName: string, number: number): Issue;
  pull(fullName: string, number: number): Issue & { pull: PullData };
  pulls(fullName: string): Array<Issue & { pull: PullData }>;
  review(fullName: string, number: number, opts: { user: string; state: ReviewState; body?: string }): Review;
  /** a review comment, in a COMMENTED review of its own unless `reviewId` names one */
  reviewComment(fullName: string, number: number, opts: { user: string; body: string; path: string; line: number; reviewId?: number }): ReviewComment;
  /** `sha` may also be a branch name of the repo's bare repository */
  checkRun(fullName: string, sha: string, opts: { name: string; status?: CheckStatus; conclusion: Conclusion; output?: { title?: string; summary?: string; text?: string } }): number;
  mergePull(fullName: string, number: number, actor?: string): void;
  closePull(fullName: string, number: number, actor?: string): void;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };
type Ctx = { login: string; repo: Repo; params: string[]; query: URLSearchParams; body: any; rawPath: string };

// A refusal thrown from deep in a handler (an issue that is not there), answered as it says.
class Refusal extends Error {
  constructor(readonly reply: Reply) {
    super(`GitHub answers ${reply.status}`);
  }
}

const DOCS = 'https://docs.github.com/rest';
const JSON_TYPE = 'application/json; charset=utf-8';
const error = (status: number, message: string, extra: object = {}): Reply => ({ status, body: { message, ...extra, documentation_url: DOCS, status: String(status) } });
const notFound = (): Reply => error(404, 'Not Found');
const invalid = (...errors: object[]): Reply => error(422, 'Validation Failed', { errors });
// GitHub's timestamps have no fraction of a second.
const stamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const nodeId = (kind: string, id: number) => Buffer.from(`${kind}${id}`).toString('base64');
const PERMISSION: Record<Role, string> = { admin: 'admin', maintain: 'write', write: 'write', triage: 'read', read: 'read', none: 'none' };

// git's answer about a bare repository, or null when git refuses (no such ref).
function gitOut(bare: string, ...args: string[]): string | null {
  try {
    return execFileSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

// A branch's tip, or null when there is no such branch (or no repository).
const tip = (bare: string | undefined, ref: string) => (bare ? gitOut(bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${ref}^{commit}`) : null);

// A sha (that the bare repository has, when there is one) or a branch or tag name, as a sha.
function resolveRef(bare: string | undefined, ref: string): string | null {
  if (!bare) return /^[0-9a-f]{40}$/.test(ref) ? ref : null;
  return tip(bare, ref) ?? gitOut(bare, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
}

// GitHub's error page for a gateway failure is HTML, not JSON: a client must cope with both.
const unicorn = (status: number) =>
  `<!DOCTYPE html>\n<html><head><title>Unicorn! &middot; GitHub</title></head>` +
  `<body><p>${status} ${STATUS_CODES[status] ?? ''}: we had issues producing the response to your request.</p></body></html>\n`;

export async function startGitHub(opts: GitHubOptions = {}): Promise<GitHubServer> {
  const tokens: Record<string, string> = { ...(opts.tokens ?? { ghp_test_token: 'grove-bot' }) };
  const users = new Map<string, User>();
  const repos = new Map<string, Repo>();
  const faults: Array<{ method?: string; path: RegExp; how: Fault; left: number }> = [];
  const requests: RecordedRequest[] = [];
  const limit = opts.rateLimit ?? 5000;
  const rate = { limit, remaining: limit, resetAt: Date.now() + 3600_000 };
  let ids = 1000;
  let url = '';
  let htmlBase = opts.htmlBase ?? '';
  const nextId = () => ++ids;

  // The model: every change goes through these, whether the API or the test makes it.
  const userOf = (login: string): User => {
    let user = users.get(login);
    if (!user) users.set(login, (user = { login, id: nextId(), type: login.endsWith('[bot]') ? 'Bot' : 'User' }));
    return user;
  };
  const repoOf = (fullName: string): Repo => {
    const repo = repos.get(fullName);
    if (!repo) throw new Error(`github-server: no repo ${fullName} (addRepo first)`);
    return repo;
  };
  const issueIn = (repo: Repo, number: number): Issue => {
    const issue = repo.issues.get(number);
    if (!issue) throw new Refusal(notFound());
    return issue;
  };
  const pullIn = (repo: Repo, number: number): Issue & { pull: PullData } => {
    const issue = issueIn(repo, number);
    if (!issue.pull) throw new Refusal(notFound());
    return issue as Issue & { pull: PullData };
  };
  const roleOf = (repo: Repo, login: string): Role => repo.roles.get(login) ?? (login === repo.owner ? 'admin' : repo.private ? 'none' : 'read');
  const association = (repo: Repo, login: string) => {
    if (login === repo.owner) return 'OWNER';
    return ['admin', 'maintain', 'write'].includes(roleOf(repo, login)) ? 'COLLABORATOR' : 'NONE';
  };
  const touch = (repo: Repo, issue?: Issue) => {
    repo.revision++;
    if (issue) issue.updatedAt = stamp();
  };
  const event = (repo: Repo, issue: Issue, name: string, actor: string, label?: string) => {
    issue.events.push({ id: nextId(), event: name, actor: userOf(actor).login, ...(label === undefined ? {} : { label }), createdAt: stamp() });
    touch(repo, issue);
  };
  const addLabels = (repo: Repo, issue: Issue, names: string[], actor: string) => {
    for (const wanted of names) {
      let label = repo.labels.get(wanted.toLowerCase());
      if (!label) repo.labels.set(wanted.toLowerCase(), (label = { id: nextId(), name: wanted, color: 'ededed' }));
      if (issue.labels.includes(label.name)) continue;
      issue.labels.push(label.name);
      event(repo, issue, 'labeled', actor, label.name);
    }
  };
  const removeLabel = (repo: Repo, issue: Issue, name: string, actor: string): boolean => {
    const at = issue.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (at < 0) return false;
    const [removed] = issue.labels.splice(at, 1);
    event(repo, issue, 'unlabeled', actor, removed);
    return true;
  };
  const addComment = (repo: Repo, issue: Issue, body: string, user: string): Comment => {
    const now = stamp();
    const comment = { id: nextId(), body, user: userOf(user).login, createdAt: now, updatedAt: now };
    issue.comments.push(comment);
    touch(repo, issue);
    return comment;
  };
  const setState = (repo: Repo, issue: Issue, state: 'open' | 'closed', actor: string) => {
    if (issue.state === state) return;
    issue.state = state;
    issue.closedAt = state === 'closed' ? stamp() : null;
    event(repo, issue, state === 'closed' ? 'closed' : 'reopened', actor);
  };
  const merge = (repo: Repo, pr: Issue & { pull: PullData }, actor: string) => {
    refreshTips(repo, pr.pull);
    pr.pull.merged = true;
    pr.pull.mergedAt = stamp();
    event(repo, pr, 'merged', actor);
    setState(repo, pr, 'closed', actor);
  };
  const newIssue = (repo: Repo, title: string, body: string | null, user: string): Issue => {
    const now = stamp();
    const number = repo.issues.size + 1;
    const issue: Issue = { id: nextId(), number, title, body, state: 'open', labels: [], user: userOf(user).login, createdAt: now, updatedAt: now, closedAt: null, comments: [], events: [] };
    repo.issues.set(issue.number, issue);
    touch(repo);
    return issue;
  };
  // An open pull request follows its branches as they are pushed; a closed one keeps its last tips.
  const refreshTips = (repo: Repo, pull: PullData) => {
    pull.headSha = tip(repo.bare, pull.head) ?? pull.headSha;
    pull.baseSha = tip(repo.bare, pull.base) ?? pull.baseSha;
  };
  const addReview = (repo: Repo, pr: Issue & { pull: PullData }, user: string, state: ReviewState, body: string): Review => {
    refreshTips(repo, pr.pull);
    const review = { id: nextId(), user: userOf(user).login, body, state, submittedAt: stamp(), commitId: pr.pull.headSha };
    pr.pull.reviews.push(review);
    touch(repo, pr);
    return review;
  };

  // GitHub's JSON for each thing, with its API and web URLs.
  const userJson = (login: string) => {
    const u = userOf(login);
    return { login: u.login, id: u.id, node_id: nodeId('U', u.id), type: u.type, site_admin: false, url: `${url}/users/${u.login}`, html_url: `${htmlBase}/${u.login}` };
  };
  const repoJson = (repo: Repo, login?: string) => {
    const role = login ? roleOf(repo, login) : null;
    const at = (...roles: Role[]) => !!role && roles.includes(role);
    const permissions = role && { admin: at('admin'), maintain: at('admin', 'maintain'), push: at('admin', 'maintain', 'write'), triage: !at('read', 'none'), pull: !at('none') };
    return {
      id: repo.id, node_id: nodeId('R', repo.id), name: repo.name, full_name: repo.fullName, owner: userJson(repo.owner), private: repo.private,
      visibility: repo.private ? 'private' : 'public', default_branch: repo.defaultBranch, html_url: `${htmlBase}/${repo.fullName}`,
      clone_url: `${htmlBase}/${repo.fullName}.git`, url: `${url}/repos/${repo.fullName}`, ...(permissions ? { permissions } : {}),
    };
  };
  const labelJson = (repo: Repo, name: string) => {
    const l = repo.labels.get(name.toLowerCase())!;
    return { id: l.id, node_id: nodeId('LA', l.id), url: `${url}/repos/${repo.fullName}/labels/${encodeURIComponent(l.name)}`, name: l.name, color: l.color, default: false, description: null };
  };
  const issueJson = (repo: Repo, i: Issue) => {
    const api = `${url}/repos/${repo.fullName}/issues/${i.number}`;
    const html = `${htmlBase}/${repo.fullName}/${i.pull ? 'pull' : 'issues'}/${i.number}`;
    const pullRequest = i.pull && { url: `${url}/repos/${repo.fullName}/pulls/${i.number}`, html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`, merged_at: i.pull.mergedAt };
    return {
      url: api, repository_url: `${url}/repos/${repo.fullName}`, labels_url: `${api}/labels{/name}`, comments_url: `${api}/comments`, events_url: `${api}/events`, html_url: html,
      id: i.id, node_id: nodeId('I', i.id), number: i.number, title: i.title, user: userJson(i.user), labels: i.labels.map((l) => labelJson(repo, l)),
      state: i.state, state_reason: i.state === 'closed' ? 'completed' : null, locked: false, assignee: null, assignees: [], milestone: null,
      comments: i.comments.length, created_at: i.createdAt, updated_at: i.updatedAt, closed_at: i.closedAt, author_association: association(repo, i.user), body: i.body,
      ...(i.pull ? { draft: i.pull.draft, pull_request: pullRequest } : {}),
    };
  };
  const commentJson = (repo: Repo, i: Issue, c: Comment) => ({
    id: c.id, node_id: nodeId('IC', c.id), url: `${url}/repos/${repo.fullName}/issues/comments/${c.id}`, html_url: `${htmlBase}/${repo.fullName}/issues/${i.number}#issuecomment-${c.id}`,
    issue_url: `${url}/repos/${repo.fullName}/issues/${i.number}`, body: c.body, user: userJson(c.user), created_at: c.createdAt, updated_at: c.updatedAt,
    author_association: association(repo, c.user),
  });
  const eventJson = (repo: Repo, e: IssueEvent) => ({
    id: e.id, node_id: nodeId('E', e.id), url: `${url}/repos/${repo.fullName}/issues/events/${e.id}`, actor: userJson(e.actor), event: e.event, commit_id: null, commit_url: null,
    created_at: e.createdAt, performed_via_github_app: null, ...(e.label === undefined ? {} : { label: { name: e.label, color: repo.labels.get(e.label.toLowerCase())?.color ?? 'ededed' } }),
  });
  const pullJson = (repo: Repo, i: Issue & { pull: PullData }) => {
    const p = i.pull;
    if (i.state === 'open') refreshTips(repo, p);
    const api = `${url}/repos/${repo.fullName}/pulls/${i.number}`;
    const html = `${htmlBase}/${repo.fullName}/pull/${i.number}`;
    const side = (ref: string, sha: string) => ({ label: `${repo.owner}:${ref}`, ref, sha, user: userJson(repo.owner), repo: repoJson(repo) });
    return {
      url: api, id: p.id, node_id: nodeId('PR', p.id), html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`, issue_url: `${url}/repos/${repo.fullName}/issues/${i.number}`,
      commits_url: `${api}/commits`, review_comments_url: `${api}/comments`, comments_url: `${url}/repos/${repo.fullName}/issues/${i.number}/comments`,
      number: i.number, state: i.state, locked: false, title: i.title, user: userJson(i.user), body: i.body, labels: i.labels.map((l) => labelJson(repo, l)), milestone: null,
      created_at: i.createdAt, updated_at: i.updatedAt, closed_at: i.closedAt, merged_at: p.mergedAt, merge_commit_sha: p.merged ? p.headSha : null,
      assignee: null, assignees: [], requested_reviewers: [], draft: p.draft, head: side(p.head, p.headSha), base: side(p.base, p.baseSha),
      author_association: association(repo, i.user), auto_merge: null, merged: p.merged, mergeable: i.state === 'open' ? true : null,
      comments: i.comments.length, review_comments: p.reviewComments.length,
    };
  };
  const reviewJson = (repo: Repo, i: Issue, r: Review) => ({
    id: r.id, node_id: nodeId('PRR', r.id), user: userJson(r.user), body: r.body, state: r.state, html_url: `${htmlBase}/${repo.fullName}/pull/${i.number}#pullrequestreview-${r.id}`,
    pull_request_url: `${url}/repos/${repo.fullName}/pulls/${i.number}`, author_association: association(repo, r.user), submitted_at: r.submittedAt, commit_id: r.commitId,
  });
  const reviewCommentJson = (repo: Repo, i: Issue, c: ReviewComment) => ({
    id: c.id, node_id: nodeId('PRRC', c.id), url: `${url}/repos/${repo.fullName}/pulls/comments/${c.id}`, pull_request_review_id: c.reviewId,
    diff_hunk: `@@ -${c.line},1 +${c.line},1 @@`, path: c.path, line: c.line, original_line: c.line, side: 'RIGHT', commit_id: c.commitId, original_commit_id: c.commitId,
    user: userJson(c.user), body: c.body, created_at: c.createdAt, updated_at: c.createdAt, author_association: association(repo, c.user),
    html_url: `${htmlBase}/${repo.fullName}/pull/${i.number}#discussion_r${c.id}`, pull_request_url: `${url}/repos/${repo.fullName}/pulls/${i.number}`,
  });
  const checkRunJson = (repo: Repo, c: CheckRun) => ({
    id: c.id, node_id: nodeId('CR', c.id), name: c.name, head_sha: c.headSha, external_id: '', url: `${url}/repos/${repo.fullName}/check-runs/${c.id}`,
    html_url: `${htmlBase}/${repo.fullName}/runs/${c.id}`, details_url: `${htmlBase}/${repo.fullName}/actions/runs/${c.id}`, status: c.status, conclusion: c.conclusion,
    started_at: c.startedAt, completed_at: c.completedAt, output: { ...c.output, annotations_count: 0, annotations_url: `${url}/repos/${repo.fullName}/check-runs/${c.id}/annotations` },
    check_suite: { id: c.id }, app: { id: 15368, slug: 'github-actions', name: 'GitHub Actions' }, pull_requests: [],
  });

  // One page of `items` per `per_page` (default 30, at most 100) and `page`, with GitHub's Link
  // header naming the other pages (absolute URLs, under the prefix the request used).
  const paginate = <T>(c: Ctx, items: T[]): { page: T[]; headers: Record<string, string> } => {
    const perPage = Math.min(100, Math.max(1, Number(c.query.get('per_page')) || 30));
    const page = Math.max(1, Math.floor(Number(c.query.get('page')) || 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (n: number, rel: string) => {
      const q = new URLSearchParams(c.query);
      q.set('page', String(n));
      return `<${url}${c.rawPath}?${q}>; rel="${rel}"`;
    };
    const links = [...(page > 1 ? [link(Math.min(page - 1, last), 'prev')] : []), ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []), ...(page > 1 ? [link(1, 'first')] : [])];
    return { page: items.slice((page - 1) * perPage, page * perPage), headers: links.length ? { link: links.join(', ') } : {} };
  };
  const list = <T>(c: Ctx, items: T[], render: (item: T) => unknown): Reply => {
    const { page, headers } = paginate(c, items);
    return { status: 200, body: page.map(render), headers };
  };
  const newestFirst = (a: Issue, b: Issue) => b.number - a.number;
  const stateFilter = (c: Ctx) => {
    const state = c.query.get('state') ?? 'open';
    return (i: Issue) => state === 'all' || i.state === state;
  };

  const createPull = (c: Ctx): Reply => {
    const repo = c.repo;
    const { title, head, base, body, draft } = c.body ?? {};
    for (const [field, value] of [['title', title], ['head', head], ['base', base]] as const) {
      if (typeof value !== 'string' || value === '') return invalid({ resource: 'PullRequest', field, code: 'missing_field' });
    }
    const [owner, ref] = head.includes(':') ? (head.split(':', 2) as [string, string]) : [repo.owner, head];
    const headSha = owner === repo.owner ? tip(repo.bare, ref) : null;
    if (!headSha) return invalid({ resource: 'PullRequest', field: 'head', code: 'invalid' });
    const baseSha = tip(repo.bare, base);
    if (!baseSha) return invalid({ resource: 'PullRequest', field: 'base', code: 'invalid' });
    if ([...repo.issues.values()].some((i) => i.pull && i.state === 'open' && i.pull.head === ref)) {
      return invalid({ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${ref}.` });
    }
    if (gitOut(repo.bare!, 'rev-list', '--count', `${baseSha}..${headSha}`) === '0') {
      return invalid({ resource: 'PullRequest', code: 'custom', message: `No commits between ${base} and ${head}` });
    }
    const issue = newIssue(repo, title, typeof body === 'string' ? body : null, c.login);
    issue.pull = { id: nextId(), head: ref, base, headSha, baseSha, draft: draft === true, merged: false, mergedAt: null, reviews: [], reviewComments: [] };
    return { status: 201, body: pullJson(repo, issue as Issue & { pull: PullData }) };
  };

  // Routes under /repos/{owner}/{repo}, matched against the rest of the path.
  const routes: Array<[string, RegExp, (c: Ctx) => Reply]> = [
    ['GET', /^$/, (c) => ({ status: 200, body: repoJson(c.repo, c.login) })],
    ['GET', /^\/issues$/, (c) => {
      const wanted = (c.query.get('labels') ?? '').split(',').map((l) => l.trim().toLowerCase()).filter(Boolean);
      const since = c.query.get('since');
      const issues = [...c.repo.issues.values()]
        .filter(stateFilter(c))
        .filter((i) => wanted.every((w) => i.labels.some((l) => l.toLowerCase() === w)))
        .filter((i) => !since || i.updatedAt >= since.replace(/\.\d+Z$/, 'Z'))
        .sort(newestFirst);
      return list(c, issues, (i) => issueJson(c.repo, i));
    }],
    ['GET', /^\/issues\/(\d+)$/, (c) => ({ status: 200, body: issueJson(c.repo, issueIn(c.repo, Number(c.params[0]))) })],
    ['PATCH', /^\/issues\/(\d+)$/, (c) => {
      const issue = issueIn(c.repo, Number(c.params[0]));
      const { state, title, body } = c.body ?? {};
      if (state !== undefined && state !== 'open' && state !== 'closed') return invalid({ resource: 'Issue', field: 'state', code: 'invalid' });
      if (typeof title === 'string') issue.title = title;
      if (typeof body === 'string' || body === null) issue.body = body;
      touch(c.repo, issue);
      if (state) setState(c.repo, issue, state, c.login);
      return { status: 200, body: issueJson(c.repo, issue) };
    }],
    ['GET', /^\/issues\/(\d+)\/events$/, (c) => list(c, issueIn(c.repo, Number(c.params[0])).events, (e) => eventJson(c.repo, e))],
    ['GET', /^\/issues\/(\d+)\/comments$/, (c) => {
      const issue = issueIn(c.repo, Number(c.params[0]));
      return list(c, issue.comments, (m) => commentJson(c.repo, issue, m));
    }],
    ['POST', /^\/issues\/(\d+)\/comments$/, (c) => {
      const issue = issueIn(c.repo, Number(c.params[0]));
      if (typeof c.body?.body !== 'string' || c.body.body === '') return invalid({ resource: 'IssueComment', field: 'body', code: 'missing_field' });
      return { status: 201, body: commentJson(c.repo, issue, addComment(c.repo, issue, c.body.body, c.login)) };
    }],
    ['POST', /^\/issues\/(\d+)\/labels$/, (c) => {
      const issue = issueIn(c.repo, Number(c.params[0]));
      // GitHub takes `{labels: [...]}` or a bare array, of names or of `{name}`
      const given: unknown = Array.isArray(c.body) ? c.body : c.body?.labels;
      const names = Array.isArray(given) ? given.map((l: any) => (typeof l === 'string' ? l : l?.name)) : null;
      if (!names || names.some((n) => typeof n !== 'string' || n === '')) return invalid({ resource: 'Label', field: 'name', code: 'invalid' });
      addLabels(c.repo, issue, names, c.login);
      return { status: 200, body: issue.labels.map((l) => labelJson(c.repo, l)) };
    }],
    ['DELETE', /^\/issues\/(\d+)\/labels\/([^/]+)$/, (c) => {
      const issue = issueIn(c.repo, Number(c.params[0]));
      if (!removeLabel(c.repo, issue, decodeURIComponent(c.params[1]!), c.login)) return error(404, 'Label does not exist');
      return { status: 200, body: issue.labels.map((l) => labelJson(c.repo, l)) };
    }],
    ['GET', /^\/collaborators\/([^/]+)\/permission$/, (c) => {
      const login = decodeURIComponent(c.params[0]!);
      const role = roleOf(c.repo, login);
      return { status: 200, body: { permission: PERMISSION[role], role_name: role, user: userJson(login) } };
    }],
    ['POST', /^\/pulls$/, createPull],
    ['GET', /^\/pulls$/, (c) => {
      const head = c.query.get('head');
      const base = c.query.get('base');
      const pulls = [...c.repo.issues.values()]
        .filter((i): i is Issue & { pull: PullData } => !!i.pull)
        .filter(stateFilter(c))
        .filter((i) => !head || head === `${c.repo.owner}:${i.pull.head}` || head === i.pull.head)
        .filter((i) => !base || i.pull.base === base)
        .sort(newestFirst);
      return list(c, pulls, (i) => pullJson(c.repo, i));
    }],
    ['GET', /^\/pulls\/(\d+)$/, (c) => ({ status: 200, body: pullJson(c.repo, pullIn(c.repo, Number(c.params[0]))) })],
    ['GET', /^\/pulls\/(\d+)\/reviews$/, (c) => {
      const pr = pullIn(c.repo, Number(c.params[0]));
      return list(c, pr.pull.reviews, (r) => reviewJson(c.repo, pr, r));
    }],
    ['GET', /^\/pulls\/(\d+)\/comments$/, (c) => {
      const pr = pullIn(c.repo, Number(c.params[0]));
      return list(c, pr.pull.reviewComments, (m) => reviewCommentJson(c.repo, pr, m));
    }],
    ['PUT', /^\/pulls\/(\d+)\/merge$/, (c) => {
      const pr = pullIn(c.repo, Number(c.params[0]));
      if (pr.state !== 'open') return error(405, 'Pull Request is not mergeable');
      merge(c.repo, pr, c.login);
      return { status: 200, body: { sha: pr.pull.headSha, merged: true, message: 'Pull Request successfully merged' } };
    }],
    ['GET', /^\/commits\/([^/]+)\/check-runs$/, (c) => {
      const ref = decodeURIComponent(c.params[0]!);
      const sha = resolveRef(c.repo.bare, ref);
      if (!sha) return error(422, `No commit found for SHA: ${ref}`);
      const name = c.query.get('check_name');
      const status = c.query.get('status');
      let runs = c.repo.checkRuns.filter((r) => r.headSha === sha && (!name || r.name === name) && (!status || r.status === status)).reverse();
      // `filter=latest` (the default): the newest run of each name only
      if (c.query.get('filter') !== 'all') runs = runs.filter((r, at) => runs.findIndex((o) => o.name === r.name) === at);
      const { page, headers } = paginate(c, runs);
      return { status: 200, body: { total_count: runs.length, check_runs: page.map((r) => checkRunJson(c.repo, r)) }, headers };
    }],
  ];

  // What an answer's ETag hashes: its body, and the revision of the repo it is about, so that a
  // change always shows, even one that leaves the body as it was within the same second (a label
  // taken off and put back). GitHub hashes the body alone; a spurious change only costs a 200.
  const etagOf = (body: string, repo?: Repo) => `W/"${createHash('sha1').update(`${repo?.revision ?? ''}\n${body}`).digest('hex')}"`;

  const rateHeaders = () => ({
    'x-ratelimit-limit': String(rate.limit), 'x-ratelimit-remaining': String(rate.remaining), 'x-ratelimit-used': String(rate.limit - rate.remaining),
    'x-ratelimit-reset': String(Math.ceil(rate.resetAt / 1000)), 'x-ratelimit-resource': 'core',
  });

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const path = u.pathname.replace(/^\/api\/v3(?=\/|$)/, '') || '/';
    const rec: RecordedRequest = { method, path, query: Object.fromEntries(u.searchParams), status: 0 };
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch) rec.ifNoneMatch = ifNoneMatch;
    if (req.headers.authorization) rec.authorization = req.headers.authorization;
    requests.push(rec);
    const send = (status: number, headers: Record<string, string>, text?: string) => {
      rec.status = status;
      const common = { 'x-github-media-type': 'github.v3; format=json', 'x-github-api-version-selected': '2022-11-28', 'x-github-request-id': `GROVE:${requests.length}` };
      if (text === undefined) return void res.writeHead(status, { ...common, ...headers }).end();
      res.writeHead(status, { ...common, 'content-length': String(Buffer.byteLength(text)), ...headers }).end(text);
    };
    const sendJson = (reply: Reply, extra: Record<string, string> = {}) => send(reply.status, { 'content-type': JSON_TYPE, ...extra, ...reply.headers }, JSON.stringify(reply.body));

    // Faults come first: they stand for GitHub's front end failing before the API sees the request.
    const fault = faults.find((f) => f.left > 0 && (!f.method || f.method.toUpperCase() === method) && f.path.test(path));
    if (fault) {
      fault.left--;
      if ('hang' in fault.how) return;
      const { status, body, headers = {} } = fault.how;
      if (typeof body === 'object') return sendJson({ status, body }, headers);
      if (body === undefined && status < 502) return sendJson(error(status, STATUS_CODES[status] ?? 'Error'), headers);
      return send(status, { 'content-type': 'text/html; charset=utf-8', ...headers }, body ?? unicorn(status));
    }

    const token = /^(?:token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const login = token !== undefined && Object.hasOwn(tokens, token) ? tokens[token] : undefined;
    if (!login) return sendJson(error(401, 'Bad credentials'));
    if (Date.now() >= rate.resetAt) Object.assign(rate, { remaining: rate.limit, resetAt: Date.now() + 3600_000 });
    if (rate.remaining <= 0) {
      const message = `API rate limit exceeded for user ID ${userOf(login).id}. If you reach out to GitHub Support for help, please include the request ID GROVE:${requests.length}.`;
      return sendJson({ status: 403, body: { message, documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: '403' } }, rateHeaders());
    }

    let reply: Reply;
    let repo: Repo | undefined;
    try {
      let body: unknown;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        throw new Refusal(error(400, 'Problems parsing JSON'));
      }
      reply = route(method, path, login, u.searchParams, body, u.pathname, (r) => (repo = r));
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      reply = err.reply;
    }

    const text = JSON.stringify(reply.body);
    const etag = method === 'GET' && reply.status === 200 ? etagOf(text, repo) : undefined;
    // A conditional GET that matches costs nothing, as on GitHub.
    if (etag && ifNoneMatch?.split(',').some((t) => t.trim().replace(/^W\//, '') === etag.slice(2) || t.trim() === '*')) {
      return send(304, { etag, ...rateHeaders() });
    }
    rate.remaining--;
    const cache: Record<string, string> = etag ? { etag, 'cache-control': 'private, max-age=60, s-maxage=60', vary: 'Accept, Authorization, Cookie, X-GitHub-OTP' } : {};
    sendJson(reply, { ...cache, ...rateHeaders() });
  };

  const route = (method: string, path: string, login: string, query: URLSearchParams, body: unknown, rawPath: string, seen: (r: Repo) => void): Reply => {
    if (path === '/user') return method === 'GET' ? { status: 200, body: { ...userJson(login), name: null, email: null } } : notFound();
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    const repo = m && repos.get(`${m[1]}/${m[2]}`);
    // a private repo is not there for whoever has no role on it, as on GitHub
    if (!m || !repo || roleOf(repo, login) === 'none') return notFound();
    seen(repo);
    for (const [verb, pattern, handler] of routes) {
      const params = verb === method ? pattern.exec(m[3] ?? '') : null;
      if (params) return handler({ login, repo, params: params.slice(1), query, body, rawPath });
    }
    return notFound();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        // a bug of this server, shown to the test as a 500 naming it rather than as a hang
        if (!res.headersSent) res.writeHead(500, { 'content-type': JSON_TYPE }).end(JSON.stringify({ message: `github-server: ${(err as Error).stack}` }));
      }
    });
  });
  server.listen({ host: '127.0.0.1', port: 0 });
  await onceEvent(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  htmlBase ||= url;
  const close = once(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  // The control API: what a test does on GitHub's side (a maintainer labels, a reviewer reviews).
  const copy = <T>(value: T): T => structuredClone(value);
  const controlled = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      // a missing issue reads as an Error in a test, not as an HTTP answer
      if (err instanceof Refusal) throw new Error(`github-server: no such issue or pull request (${err.reply.status})`);
      throw err;
    }
  };
  return {
    url,
    tokens,
    requests,
    clearRequests: () => void requests.splice(0),
    close,
    setRateLimit: ({ remaining, limit: newLimit, resetAt }) => {
      if (newLimit !== undefined) rate.limit = newLimit;
      rate.remaining = remaining ?? Math.min(rate.remaining, rate.limit);
      if (resetAt) rate.resetAt = resetAt.getTime();
    },
    fail: (match, how) => {
      const fault = { ...match, how, left: how.times ?? Infinity };
      faults.push(fault);
      return () => void (fault.left = 0);
    },
    addRepo: (fullName, o = {}) => {
      const [owner, name] = fullName.split('/') as [string, string];
      userOf(owner);
      const defaults = { defaultBranch: o.defaultBranch ?? 'main', private: o.private ?? false };
      repos.set(fullName, { id: nextId(), owner, name, fullName, bare: o.bare, ...defaults, labels: new Map(), issues: new Map(), roles: new Map(), checkRuns: [], revision: 0 });
    },
    addUser: (login, o = {}) => {
      const user = userOf(login);
      if (o.id !== undefined) user.id = o.id;
      if (o.type) user.type = o.type;
      return copy(user);
    },
    setPermission: (fullName, login, role) => {
      const repo = repoOf(fullName);
      repo.roles.set(userOf(login).login, role);
      touch(repo);
    },
    addIssue: (fullName, o) => {
      const repo = repoOf(fullName);
      return newIssue(repo, o.title, o.body ?? null, o.user ?? repo.owner).number;
    },
    label: (fullName, number, name, actor) => controlled(() => {
      const repo = repoOf(fullName);
      addLabels(repo, issueIn(repo, number), [name], actor ?? repo.owner);
    }),
    unlabel: (fullName, number, name, actor) => controlled(() => {
      const repo = repoOf(fullName);
      if (!removeLabel(repo, issueIn(repo, number), name, actor ?? repo.owner)) throw new Error(`github-server: #${number} has no label ${name}`);
    }),
    comment: (fullName, number, o) => controlled(() => {
      const repo = repoOf(fullName);
      return copy(addComment(repo, issueIn(repo, number), o.body, o.user));
    }),
    closeIssue: (fullName, number, actor) => controlled(() => {
      const repo = repoOf(fullName);
      setState(repo, issueIn(repo, number), 'closed', actor ?? repo.owner);
    }),
    issue: (fullName, number) => controlled(() => copy(issueIn(repoOf(fullName), number))),
    pull: (fullName, number) => controlled(() => {
      const repo = repoOf(fullName);
      const pr = pullIn(repo, number);
      if (pr.state === 'open') refreshTips(repo, pr.pull);
      return copy(pr);
    }),
    pulls: (fullName) => copy([...repoOf(fullName).issues.values()].filter((i): i is Issue & { pull: PullData } => !!i.pull)),
    review: (fullName, number, o) => controlled(() => {
      const repo = repoOf(fullName);
      return copy(addReview(repo, pullIn(repo, number), o.user, o.state, o.body ?? ''));
    }),
    reviewComment: (fullName, number, o) => controlled(() => {
      const repo = repoOf(fullName);
      const pr = pullIn(repo, number);
      // on GitHub a lone review comment comes in a review of its own
      const reviewId = o.reviewId ?? addReview(repo, pr, o.user, 'COMMENTED', '').id;
      const comment = { id: nextId(), reviewId, user: userOf(o.user).login, body: o.body, path: o.path, line: o.line, commitId: pr.pull.headSha, createdAt: stamp() };
      pr.pull.reviewComments.push(comment);
      touch(repo, pr);
      return copy(comment);
    }),
    checkRun: (fullName, sha, o) => {
      const repo = repoOf(fullName);
      const headSha = resolveRef(repo.bare, sha);
      if (!headSha) throw new Error(`github-server: ${fullName} has no commit ${sha}`);
      const status = o.status ?? (o.conclusion ? 'completed' : 'queued');
      const output = { title: o.output?.title ?? null, summary: o.output?.summary ?? null, text: o.output?.text ?? null };
      const done = status === 'completed';
      const run = { id: nextId(), name: o.name, headSha, status, conclusion: done ? o.conclusion : null, startedAt: stamp(), completedAt: done ? stamp() : null, output };
      repo.checkRuns.push(run);
      touch(repo);
      return run.id;
    },
    mergePull: (fullName, number, actor) => controlled(() => {
      const repo = repoOf(fullName);
      merge(repo, pullIn(repo, number), actor ?? repo.owner);
    }),
    closePull: (fullName, number, actor) => controlled(() => {
      const repo = repoOf(fullName);
      setState(repo, pullIn(repo, number), 'closed', actor ?? repo.owner);
    }),
  };
}
