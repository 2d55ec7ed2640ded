-- A setup or teardown command cut short by a daemon stop says so, rather than only having no exit code.
ALTER TABLE setup_commands ADD COLUMN interrupted boolean NOT NULL DEFAULT false;
