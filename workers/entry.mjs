// Piscina loads this plain-JS file in each worker thread: it registers tsx there (the main
// thread's --import does not reach worker threads on Node 20), then loads the TypeScript tasks.
import { register } from 'tsx/esm/api';

register();

export const { createWorktree, removeWorktree, runSetup } = await import('./index.ts');
