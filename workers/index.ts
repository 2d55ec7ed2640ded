// The worker pool's tasks, by name (Piscina's `name` option).
export { createWorktree } from './worktree/create.ts';
export { removeWorktree } from './worktree/remove.ts';
export { runSetup } from './setup.ts';
