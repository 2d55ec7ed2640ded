// The automations the dashboard shows (DESIGN §19), kept current by the automation.* events: each
// reads its project's list again, since the scheduler moves an automation's next time when it
// claims a run without an event of the automation's own (the run's event is in that transaction).
import type { Automation, AutomationRun } from '../../schemas/automation.ts';
import type { GroveEvent } from '../../schemas/event.ts';
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

// Every project's automations, read at the page's first load in one request.
export async function loadAutomations(): Promise<Map<string, Automation[]>> {
  const byProject = new Map<string, Automation[]>();
  for (const a of await api<Automation[]>('GET', '/api/automations')) byProject.set(a.project_id, [...(byProject.get(a.project_id) ?? []), a]);
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
    apply(e: GroveEvent): void {
      if (e.type === 'automation.run') state().runsSeq.set((e.data as AutomationRun).automation_id, e.seq);
      reload(e.project_id!);
    },
  };
}
