import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TEXT_PATTERN, UUID_PATTERN } from './common.ts';

export const ProjectName = Type.String({ minLength: 1, maxLength: 100, pattern: TEXT_PATTERN });

export const Project = Type.Object(
  {
    id: Id,
    name: ProjectName,
    path: Type.String({ description: 'absolute, canonical root of a git work tree' }),
    created_at: Timestamp,
    host_id: Type.String({ pattern: UUID_PATTERN, description: 'the host whose disk holds the repository' }),
    repository: Type.Union([Type.String(), Type.Null()], {
      description: "its `origin` remote's URL, normalised (`host/path`, no scheme, user, port or `.git`; a local origin as its absolute path), or null without origin: the same repository on several hosts has the same value",
    }),
  },
  { $id: 'Project' },
);
export type Project = Static<typeof Project>;

export const ProjectList = Type.Array(Project);
export type ProjectList = Static<typeof ProjectList>;

export const CreateProject = Type.Object(
  {
    // Relative paths are refused here: the daemon's cwd means nothing to the caller.
    path: Type.String({ minLength: 1, maxLength: 4096, pattern: '^/[^\\u0000-\\u001f\\u007f]*$' }),
    name: Type.Optional(ProjectName),
  },
  { additionalProperties: false, $id: 'CreateProject' },
);
export type CreateProject = Static<typeof CreateProject>;
