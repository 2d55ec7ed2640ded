// The store's worker thread loads this plain-JS file: it registers tsx there (the main
// thread's --import does not reach worker threads on Node 20), then runs the TypeScript.
import { register } from 'tsx/esm/api';

register();

await import('./worker.ts');
