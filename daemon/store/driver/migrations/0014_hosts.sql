-- Hosts (DESIGN §14.2): every daemon keeping its state in this store. Times come from the store's
-- clock, so hosts whose clocks differ agree on who is online. `stopped` says the host is known to
-- be down (it stopped cleanly, or another host recorded it offline), so host.offline goes out once.
CREATE TABLE hosts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  version text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now(),
  stopped boolean NOT NULL DEFAULT false
);
-- The host whose disk and processes hold a row. Null only until the daemon that ran this
-- migration registers itself (daemon/store/hosts.ts): rows made before hosts existed are its own.
ALTER TABLE projects ADD COLUMN host_id uuid;
ALTER TABLE tasks ADD COLUMN host_id uuid;
ALTER TABLE sessions ADD COLUMN host_id uuid;
-- The project's normalised origin URL (daemon/git/origin.ts), or null without origin.
ALTER TABLE projects ADD COLUMN repository text;
