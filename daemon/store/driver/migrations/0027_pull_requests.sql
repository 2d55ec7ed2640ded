-- A task's pull request (DESIGN §20): one per task, opened by grove and followed while it is open.
CREATE TABLE pull_requests (
  task_id uuid PRIMARY KEY,
  project_id uuid NOT NULL,
  -- The daemon that opened it follows it (its worktree is there).
  host_id uuid NOT NULL,
  repository text NOT NULL,
  number integer NOT NULL,
  url text NOT NULL,
  state text NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
  head text NOT NULL,
  base text NOT NULL,
  issue_number integer,
  fix_tries integer NOT NULL DEFAULT 3,
  -- What grove already acted on, so that no feedback is answered twice:
  -- {reviews: [id], review_comments: [id], comments: [id], checks: [{id, sha}]}.
  acted jsonb NOT NULL,
  -- The follow-up session in flight; its end pushes what it committed.
  fix_session uuid,
  -- [{kind, source_ids, author, at, session_id, pushed_commit, outcome, error}], oldest first.
  rounds jsonb NOT NULL DEFAULT '[]',
  -- Set when grove stops following an open pull request (its fix tries spent).
  stopped_reason text,
  opened_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz
);
CREATE UNIQUE INDEX pull_requests_number ON pull_requests (repository, number);
CREATE INDEX pull_requests_followed ON pull_requests (host_id) WHERE state = 'open' AND stopped_reason IS NULL;
