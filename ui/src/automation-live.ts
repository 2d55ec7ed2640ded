// The automations the dashboard shows (DESIGN §19), kept current by the automation.* events: each
// reads its project's list again, since the scheduler moves an automation's next time when it
// claims a run without an event of the automation's own (the run's event is in that transaction).
import type { Automation, AutomationRun } from '../../schemas/automation.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import type { Project } from '../../schemas/project.ts';
import { api } from './api.ts';
import { newestReads } from './reload.ts';

export interface AutomationState {
  /** each project's automations, oldest first, as GET /api/automations?project_id= answers */
  automations: Map<string, Automation[]>;
  /** the seq of the last automation.run event of each automation: its runs are read again when it moves */
  runsSeq: Map<string, number>;
}

export const emptyAutomations = (): AutomationState => ({ automations: new Map(), runsSeq: new Map() });

export const isAutomationEvent = (e: GroveEvent) => e.type.startsWith('automation.');

// Every project's automations, read at the page's first load in one request: a team's automation
// of a repository is shown with every project of that repository.
export async function loadAutomations(projects: Promise<Project[]>): Promise<Map<string, Automation[]>> {
  const [list, all] = await Promise.all([api<Automation[]>('GET', '/api/automations'), projects]);
  const byProject = new Map<string, Automation[]>();
  for (const a of list) {
    const ids = a.project_id !== null ? [a.project_id] : all.filter((p) => p.repository === a.repository).map((p) => p.id);
    for (const id of ids) byProject.set(id, [...(byProject.get(id) ?? []), a]);
  }
  return byProject;
}

// What applies the automations' events to `state`; `changed` is told when a list read has answered.
export function automationFeed(state: () => AutomationState, changed: () => void) {
  const reload = newestReads(
    (projectId) => api<Automation[]>('GET', `/api/automations?project_id=${projectId}`),
    (projectId, list) => state().automations.set(projectId, list),
    changed,
  );
  return {
    // An event of a repository's automation has no project: every list is read again.
    apply(e: GroveEvent, projectIds: () => string[]): void {
      if (e.type === 'automation.run') state().runsSeq.set((e.data as AutomationRun).automation_id, e.seq);
      for (const id of e.project_id !== null ? [e.project_id] : projectIds()) reload(id);
    },
  };
}
