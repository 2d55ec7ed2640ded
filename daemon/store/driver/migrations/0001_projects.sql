CREATE TABLE projects (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  path text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
