-- The owner acts (DESIGN §14.2): a request on another host's resource is written here, taken by
-- that host (the row locked, SKIP LOCKED), run there as a local request and answered here. Times
-- come from the store's clock, so requester and owner agree on a command's age.
CREATE TABLE commands (
  id uuid PRIMARY KEY,
  host_id uuid NOT NULL,
  from_host_id uuid NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  headers jsonb NOT NULL,
  body text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'taken', 'done', 'withdrawn', 'abandoned')),
  created_at timestamptz NOT NULL DEFAULT now(),
  taken_at timestamptz,
  ended_at timestamptz,
  answer_status integer,
  answer_headers jsonb,
  -- base64: a diff's bytes need not be UTF-8.
  answer_body text
);
CREATE INDEX commands_queue ON commands (host_id, status, created_at);
-- Whether the host runs commands from other hosts (user config accept_remote); when its command
-- loop last looked at its queue; and whether a command to it was withdrawn untaken since: then
-- its loop is not running, whatever its heartbeat says, and it is offline until the loop looks.
ALTER TABLE hosts ADD COLUMN accept_remote boolean NOT NULL DEFAULT true;
ALTER TABLE hosts ADD COLUMN polled_at timestamptz;
ALTER TABLE hosts ADD COLUMN unresponsive boolean NOT NULL DEFAULT false;
