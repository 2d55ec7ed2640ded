-- The process group of a running setup command, so a daemon killed mid-setup can stop it on
-- its next start (pid + start time name one process, as for sessions).
ALTER TABLE setup_commands ADD COLUMN pid integer;
ALTER TABLE setup_commands ADD COLUMN pid_start text;
-- Which command printed a setup line, so a transcript orders lines and commands exactly.
ALTER TABLE setup_lines ADD COLUMN idx integer;
