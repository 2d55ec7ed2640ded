-- Work that arrives (DESIGN §20). The issue a task was made from: {provider, repository, number,
-- url, title}, null for the others.
ALTER TABLE tasks ADD COLUMN issue jsonb;

-- A project's watch of a repository's labelled issues: one per project. `spec` is {session,
-- land, interval_s} as the API shows them.
CREATE TABLE intakes (
  project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  provider text NOT NULL CHECK (provider IN ('github')),
  repository text NOT NULL,
  label text NOT NULL,
  spec jsonb NOT NULL,
  -- api: made through the API; file: the project's .grove.json `intake`, which it follows.
  source text NOT NULL CHECK (source IN ('api', 'file')),
  declared jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- An issue's label event as intake dealt with it. Claimed by inserting its row: the unique key
-- makes an issue's label event taken (or refused) once, across restarts and a team's daemons. A
-- label removed and added again is a new event, so a new row and a new task.
CREATE TABLE intake_items (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL,
  repository text NOT NULL,
  number integer NOT NULL,
  label_event text NOT NULL,
  title text NOT NULL,
  url text NOT NULL,
  actor text,
  -- claimed: its task is being made; taken: made (its write-back follows the task); refused, failed.
  outcome text NOT NULL CHECK (outcome IN ('claimed', 'taken', 'refused', 'failed')),
  reason text,
  task_id uuid,
  session_id uuid,
  -- Where the issue's write-back is: working (commented and labelled), landing (in the merge
  -- queue), done, or failed.
  reported text CHECK (reported IN ('working', 'landing', 'done', 'failed')),
  host_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX intake_items_once ON intake_items (repository, number, label_event);
CREATE INDEX intake_items_newest ON intake_items (project_id, created_at DESC);
CREATE INDEX intake_items_task ON intake_items (task_id) WHERE task_id IS NOT NULL;
