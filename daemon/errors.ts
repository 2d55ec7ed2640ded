import type { Problem, ValidationIssue } from '../schemas/common.ts';

export type { ValidationIssue };

// One catalog: every error the API can answer, with its status and title (DESIGN §4).
export const ERRORS = {
  INVALID_JSON: { status: 400, title: 'Request body is not valid JSON' },
  VALIDATION_FAILED: { status: 400, title: 'Request failed validation' },
  INVALID_ID: { status: 400, title: 'Malformed id' },
  FORBIDDEN_HOST: { status: 403, title: 'Host not allowed' },
  FORBIDDEN_ORIGIN: { status: 403, title: 'Origin not allowed' },
  // Not in DESIGN §4's table: the TCP front refuses connections of other local users.
  FORBIDDEN_PEER: { status: 403, title: 'Connection from another user' },
  // Not in DESIGN §4's table: a session's own socket (DESIGN §18) answers only that session's
  // asks for approval and waits on their verdicts.
  SESSION_SOCKET_SCOPE: { status: 403, title: "Not this session's call to make" },
  REMOTE_REFUSED: { status: 403, title: 'The owning host does not run requests from other hosts' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  PROJECT_EXISTS: { status: 409, title: 'Project already exists' },
  PROJECT_HAS_TASKS: { status: 409, title: 'Project has tasks' },
  BRANCH_EXISTS: { status: 409, title: 'Branch already exists' },
  TASK_NOT_READY: { status: 409, title: 'Task is not ready' },
  WORKTREE_DIRTY: { status: 409, title: 'Worktree has uncommitted changes' },
  SESSION_NOT_RUNNING: { status: 409, title: 'Session is not running' },
  NOTHING_TO_COMMIT: { status: 409, title: 'Nothing to commit' },
  CONFLICT: { status: 409, title: 'The changes conflict' },
  SERVICE_RUNNING: { status: 409, title: 'The service is already running' },
  BASE_CHECKOUT_DIRTY: { status: 409, title: 'The checkout of the base branch has uncommitted changes' },
  APPROVAL_DECIDED: { status: 409, title: 'The approval was already decided' },
  APPROVAL_STALE: { status: 409, title: "The nonce is not the approval's: the decision was made on an out-of-date view" },
  // A session of the conversation runs (or waits its turn): grove takeover waits for it to end.
  SESSION_RUNNING: { status: 409, title: 'A session of the conversation is running' },
  // A WebSocket to a session's terminal (DESIGN §21) asked of a headless session.
  NOT_A_TERMINAL: { status: 409, title: 'The session has no terminal' },
  // A task is in at most one merge queue (DESIGN §17).
  ALREADY_QUEUED: { status: 409, title: 'The task is already queued' },
  // Not in DESIGN §4's table: a task the merge queue is landing now leaves it once the landing ends.
  QUEUE_LANDING: { status: 409, title: 'The task is being landed' },
  // Not in DESIGN §4's table: a project has one automation of each name (DESIGN §19).
  AUTOMATION_EXISTS: { status: 409, title: 'The project has an automation of that name' },
  RESUME_UNAVAILABLE: { status: 409, title: "The agent's session id is not known, so its conversation cannot be continued" },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  NOT_A_GIT_REPO: { status: 422, title: 'Not a git work tree' },
  CONFIG_INVALID: { status: 422, title: 'Project configuration is invalid' },
  AGENT_REQUIRED: { status: 422, title: 'No agent given and no default configured' },
  UNKNOWN_AGENT: { status: 422, title: 'Unknown agent' },
  AGENT_NOT_INSTALLED: { status: 422, title: 'Agent command not found on PATH' },
  BASE_NOT_FOUND: { status: 422, title: 'Base ref not found' },
  MODE_UNSUPPORTED: { status: 422, title: 'The agent cannot run in this mode' },
  // DESIGN §18: `sandbox: true` where this machine cannot confine; the detail says what to install.
  SANDBOX_UNAVAILABLE: { status: 422, title: 'This machine cannot confine the session' },
  // DESIGN §19: a cron, zone or `at` that cannot be scheduled; `errors` names the field and why.
  SCHEDULE_INVALID: { status: 422, title: 'The schedule is invalid' },
  // DESIGN §20: an intake grove cannot watch (no GitHub repository, an unknown provider, an empty
  // label, an interval under 1 s); the detail says which.
  INTAKE_INVALID: { status: 422, title: 'The intake is invalid' },
  // DESIGN §20: an issue_url grove cannot read (not an issue of the configured GitHub, not found,
  // no token); the detail says why.
  ISSUE_NOT_FOUND: { status: 422, title: 'The issue cannot be read' },
  // DESIGN §20: POST /api/tasks/:id/pr on a task whose pull request is open (one per task).
  PR_EXISTS: { status: 409, title: 'The task has an open pull request' },
  // DESIGN §20: a pull request for a task that is not from an issue and whose project's origin is
  // not on the configured GitHub: grove does not know the repository to open it in.
  PR_NO_REPOSITORY: { status: 422, title: 'The task has no repository on GitHub' },
  // DESIGN §20: a pull request for a task whose branch has nothing its base lacks.
  PR_NO_CHANGES: { status: 422, title: 'The task has no changes to propose' },
  // DESIGN §20: GitHub refused a request (no token or a refused one, no access, not found, a
  // pull request GitHub will not open); the detail carries GitHub's own message, never the token.
  GITHUB_REFUSED: { status: 422, title: 'GitHub refused the request' },
  // DESIGN §20: GitHub could not be reached, or its rate limit is spent (then with Retry-After).
  GITHUB_UNAVAILABLE: { status: 503, title: 'GitHub is unavailable' },
  NO_REMOTE: { status: 422, title: 'The repository has no such remote' },
  REMOTE_FAILED: { status: 502, title: 'The remote refused or could not be reached' },
  // Not in DESIGN §4's table: a task queued in another project's queue, or archived (DESIGN §17).
  TASK_NOT_QUEUEABLE: { status: 422, title: 'The task cannot be queued here' },
  RESUME_UNSUPPORTED: { status: 422, title: 'The agent cannot continue a conversation' },
  // Not in DESIGN §4's table: grove takeover on an agent with no interactive resume (or a session
  // that is no agent's conversation), or an end reported for a session that is not interactive.
  TAKEOVER_UNSUPPORTED: { status: 422, title: 'The session cannot be taken over in a terminal' },
  // interface "terminal" (DESIGN §21) for an agent without an interactive command, or where no
  // pseudo-terminal can be made.
  INTERFACE_UNSUPPORTED: { status: 422, title: 'The session cannot run in that interface' },
  // Not in DESIGN §4's table: git refused a commit (a hook failed, no identity), with its message.
  COMMIT_FAILED: { status: 422, title: 'git refused the commit' },
  // Not in DESIGN §4's table: a tracked path in a task's worktree is a FIFO, socket or device, which git cannot read.
  UNSUPPORTED_FILE: { status: 409, title: 'The worktree holds a file git cannot read' },
  // Not in DESIGN §4's table (§17 asks a 404): a turn the task does not have, in ?from=/?to= or a restore.
  TURN_NOT_FOUND: { status: 404, title: 'The task has no such turn' },
  // Not in DESIGN §4's table (§17 asks a 422): `after` names a task that does not exist or is
  // archived unmerged; the detail names it.
  AFTER_INVALID: { status: 422, title: 'A task to wait for cannot merge' },
  INTERNAL: { status: 500, title: 'Internal error' },
  // Not in DESIGN §4's table: a review or landing git ran past its bound (git_timeout_s, or
  // setup_timeout_s for a commit and its hooks) and was stopped; the detail names which.
  GIT_TIMEOUT: { status: 504, title: 'git took too long' },
  // Not in DESIGN §4's table: the TCP front answers it when the API socket cannot be reached.
  UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  // The shared store (PostgreSQL, DESIGN §14.2) cannot be reached; answered with Retry-After.
  STORE_UNAVAILABLE: { status: 503, title: 'The store cannot be reached' },
  HOST_OFFLINE: { status: 503, title: 'The owning host is offline' },
  // Not in DESIGN §4's table: /api/hosts/NAME/… could not reach the saved SSH host's daemon (ssh
  // failed or timed out, or the forward did not answer); the detail carries ssh's own message.
  HOST_UNREACHABLE: { status: 502, title: "The SSH host's daemon cannot be reached" },
  // Not in DESIGN §4's table: hosts.json (DESIGN §14.1) is not valid JSON or not its schema.
  HOSTS_FILE_INVALID: { status: 422, title: 'hosts.json is invalid' },
  // Not in DESIGN §4's table: another program holds a git lock file grove needs (kept, never removed).
  REPO_LOCKED: { status: 409, title: 'Repository is locked by another git process' },
  // Not in DESIGN §4's table: a rebase or merge cut short left a checkout that grove cannot put
  // right without touching someone else's changes; review writes of that project wait for the user.
  LANDING_INTERRUPTED: { status: 409, title: 'A landing was interrupted and needs the user' },
  // Not in DESIGN §4's table: the disk of the data folder is full; the daemon stays up.
  INSUFFICIENT_STORAGE: { status: 507, title: 'Insufficient storage' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERRORS;

// Thrown by handlers and the request pipeline; carries data only, never a cause to leak.
export class GroveError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string;
  readonly errors: ValidationIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** the files a CONFLICT is about (DESIGN §9) */
  readonly files: string[] | undefined;

  constructor(code: ErrorCode, detail: string, opts: { errors?: ValidationIssue[]; headers?: Record<string, string>; files?: string[] } = {}) {
    super(detail);
    this.name = 'GroveError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.detail = detail;
    this.errors = opts.errors;
    this.headers = opts.headers;
    this.files = opts.files;
  }
}

// The one body shape for every error answer (RFC 9457).
export function problemBody(code: ErrorCode, detail: string, errors?: ValidationIssue[], files?: string[]): Problem {
  const { status, title } = ERRORS[code];
  const body: Problem = {
    type: `urn:grove:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title,
    status,
    detail,
    code,
  };
  if (errors && errors.length > 0) body.errors = errors;
  if (files) body.files = files;
  return body;
}

// A full disk shows up as ENOSPC from node:fs and as SQLSTATE 53100 (disk_full) from PGlite.
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === '53100') return true;
  // Errors from a worker thread arrive without their code, with it in the message.
  return typeof e.message === 'string' && /no space left on device|^ENOSPC\b/i.test(e.message);
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
