import type { Project } from '../../schemas/project.ts';
import type { Listen } from '../runtime/signal.ts';

// Calls `fn` with this host's project whenever its .grove.json changes (the configs' signal is
// keyed by the project's path); returns what stops it. What the file declares (automations, an
// intake) is applied this way.
export function onProjectConfig(changes: Listen<string>, localProjects: () => Promise<Project[]>, fn: (projectId: string) => void): () => void {
  return changes.onAnyChange((root) => {
    void localProjects().then((list) => {
      const p = list.find((x) => x.path === root);
      if (p) fn(p.id);
    });
  });
}
