-- A project is a folder on one host's disk (DESIGN §14.2): two teammates may both have a clone
-- called `app`, even at the same path, so names and paths are unique per host, not per store.
ALTER TABLE projects DROP CONSTRAINT projects_name_key;
ALTER TABLE projects DROP CONSTRAINT projects_path_key;
ALTER TABLE projects ADD CONSTRAINT projects_host_name_key UNIQUE (host_id, name);
ALTER TABLE projects ADD CONSTRAINT projects_host_path_key UNIQUE (host_id, path);
