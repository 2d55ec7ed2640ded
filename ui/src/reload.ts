// Lists the dashboard reads again after each event about them (a project's merge queue, a
// project's automations), one list a key. Only the newest read of a key is kept: an older one
// answering late would show the state from before the event that asked for the newer.
export function newestReads<T>(read: (key: string) => Promise<T>, put: (key: string, value: T) => void, changed: () => void): (key: string) => void {
  const asked = new Map<string, number>();
  return (key) => {
    const n = (asked.get(key) ?? 0) + 1;
    asked.set(key, n);
    read(key).then(
      (value) => {
        if (asked.get(key) !== n) return;
        put(key, value);
        changed();
      },
      // Its owner may be gone (its removal is an event of its own); the next event reads again.
      () => {},
    );
  };
}
