import { IdParams } from '../../schemas/common.ts';
import { CreateProject, Project, ProjectList } from '../../schemas/project.ts';
import { route, type Route } from '../http/route.ts';
import type { ProjectService } from '../projects/service.ts';

// /api/projects: thin adapters from HTTP to the project service.
export function projectRoutes(deps: { projects: ProjectService }): Route[] {
  const { projects } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/projects',
      summary: 'List projects',
      responses: { 200: ProjectList },
      handler: async () => ({ status: 200, body: await projects.list() }),
    }),
    route({
      method: 'POST',
      path: '/api/projects',
      summary: 'Add a git repository as a project',
      body: CreateProject,
      responses: { 201: Project },
      errors: ['PROJECT_EXISTS', 'NOT_A_GIT_REPO'],
      handler: async ({ body }) => ({ status: 201, body: await projects.add(body) }),
    }),
    route({
      method: 'GET',
      path: '/api/projects/:id',
      summary: 'Get a project',
      params: IdParams,
      responses: { 200: Project },
      handler: async ({ params }) => ({ status: 200, body: await projects.get(params.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/projects/:id',
      owner: 'project',
      summary: 'Remove a project (its repository is left untouched)',
      params: IdParams,
      responses: { 204: null },
      errors: ['PROJECT_HAS_TASKS'],
      handler: async ({ params }) => {
        await projects.remove(params.id);
        return { status: 204 };
      },
    }),
  ];
}
