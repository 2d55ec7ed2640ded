-- Automations (DESIGN §19): a definition (`spec`: schedule, session, task, precheck, land, missed,
-- overlap, as the API shows them) of a project, or of a repository (a team's: any host with a
-- project of it may claim each time), unique by name in either. `cursor` is the latest scheduled
-- time already dealt with (run, folded or skipped): the times after it up to now are due.
-- `next_run_at` is the next one, null while paused or once an `at` has passed; the scheduler
-- reads the due ones by it.
CREATE TABLE automations (
  id uuid PRIMARY KEY,
  project_id uuid REFERENCES projects (id) ON DELETE CASCADE,
  repository text,
  name text NOT NULL,
  spec jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  -- api: made through the API; file: declared in the project's .grove.json, which it follows.
  source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'file')),
  -- With source file: the entry as last applied, so that an unchanged entry is left alone.
  declared jsonb,
  cursor timestamptz NOT NULL,
  next_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((project_id IS NULL) <> (repository IS NULL))
);
CREATE UNIQUE INDEX automations_project_name ON automations (project_id, name) WHERE project_id IS NOT NULL;
CREATE UNIQUE INDEX automations_repository_name ON automations (repository, name) WHERE repository IS NOT NULL;
CREATE INDEX automations_due ON automations (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;

-- A run of an automation. A scheduled time is claimed by inserting its row: the partial unique
-- key makes that once, across restarts and a team's daemons. Manual runs (POST …/runs) are not
-- scheduled times and are not in the key.
CREATE TABLE automation_runs (
  id uuid PRIMARY KEY,
  automation_id uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
  -- The project it runs in: the automation's, or the claiming host's project of its repository.
  project_id uuid,
  scheduled_for timestamptz NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  status text NOT NULL CHECK (status IN ('pending', 'precheck', 'running', 'succeeded', 'failed', 'skipped')),
  reason text CHECK (reason IN ('precheck', 'overlap', 'missed', 'disabled')),
  error text,
  missed integer NOT NULL DEFAULT 0,
  precheck jsonb,
  -- The running precheck's process group, stopped at the next start if a killed daemon left it.
  precheck_pid integer,
  precheck_pid_start text,
  task_id uuid,
  session_id uuid,
  result jsonb,
  changes jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  ended_at timestamptz
);
CREATE UNIQUE INDEX automation_runs_once ON automation_runs (automation_id, scheduled_for) WHERE trigger = 'schedule';
CREATE INDEX automation_runs_newest ON automation_runs (automation_id, created_at DESC);
CREATE INDEX automation_runs_active ON automation_runs (status) WHERE status IN ('pending', 'precheck', 'running');
