// Small Preact hooks the views share.
import { useEffect, useState, useSyncExternalStore } from 'preact/compat';
import type { Live } from './live.ts';

// The one busy-and-error state of a view's actions: `run(fn)` marks it busy and clears the last
// error while `fn` runs, keeps a throw as the error, and gives what `fn` returned (undefined
// after a throw).
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  async function run<T>(fn: () => Promise<T>): Promise<T | undefined> {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, run };
}

// Re-renders on every change of the live state.
export function useLive(live: Live): number {
  return useSyncExternalStore(live.subscribe, () => live.version);
}

// The address's hash as a route: `#/tasks/<id>` → ['tasks', '<id>'].
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

// A value loaded by `load`, again whenever `deps` change; `reload` asks again.
export function useLoad<T>(load: () => Promise<T>, deps: Array<string | number | null | undefined>): { value: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [n, setN] = useState(0);
  // Loading until the load for these very deps has settled: true in the same render that changes them.
  const key = JSON.stringify([...deps, n]);
  const [settled, setSettled] = useState<string | null>(null);
  useEffect(() => {
    let on = true;
    load().then(
      (v) => on && (setValue(() => v), setError(undefined), setSettled(key)),
      (e: unknown) => on && (setError(e), setSettled(key)),
    );
    return () => {
      on = false;
    };
  }, [key]);
  return { value, error, loading: settled !== key, reload: () => setN((x) => x + 1) };
}
