// The worker pool's tasks, by name (Piscina's `name` option).
export { createWorktree, removeWorktree } from './worktree.ts';
export { runSetup } from './setup.ts';
