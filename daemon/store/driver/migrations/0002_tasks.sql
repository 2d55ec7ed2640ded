CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  branch text NOT NULL,
  worktree_path text NOT NULL,
  base text NOT NULL,
  base_commit text NOT NULL,
  status text NOT NULL CHECK (status IN ('setting_up', 'ready', 'setup_failed', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  archived_at timestamptz
);
CREATE INDEX tasks_project ON tasks (project_id, created_at);
-- One live task per worktree folder; archived ones free the folder name.
CREATE UNIQUE INDEX tasks_live_worktree ON tasks (project_id, worktree_path) WHERE status <> 'archived';

-- A row per port a live task holds; deleted when the task is archived, so a port is unique among live tasks.
CREATE TABLE port_leases (
  port integer PRIMARY KEY CHECK (port BETWEEN 1 AND 65535),
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  declared integer NOT NULL CHECK (declared BETWEEN 1 AND 65535),
  UNIQUE (task_id, declared)
);

CREATE TABLE setup_commands (
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  idx integer NOT NULL,
  command text NOT NULL,
  exit_code integer,
  signal text,
  timed_out boolean NOT NULL DEFAULT false,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  PRIMARY KEY (task_id, idx)
);

CREATE TABLE setup_lines (
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  seq integer NOT NULL,
  stream text NOT NULL CHECK (stream IN ('stdout', 'stderr')),
  text text NOT NULL,
  at timestamptz NOT NULL,
  PRIMARY KEY (task_id, seq)
);
