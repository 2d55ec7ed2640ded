import type { TestDaemon } from './daemon.ts';

// For a daemon shared by a file's tests: what a list (GET `url`: projects, tasks) holds now that
// it did not when this was called, i.e. what the test itself added since it began.
export async function newSince(d: TestDaemon, url: string): Promise<<T extends { id: string }>(list: T[]) => T[]> {
  const before = new Set(((await d.socket('GET', url)).json as Array<{ id: string }>).map((x) => x.id));
  return (list) => list.filter((x) => !before.has(x.id));
}
