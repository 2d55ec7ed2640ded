// Rows by id kept in memory, for tables whose every write goes through their own module: this
// daemon is the store's only writer. A write forgets its row before and after it runs and
// counts a version, so a read that overlapped a write is not kept; forgetAll() does the same
// for every row (a cascade: a project's removal deletes its tasks and their sessions).
export interface RowCache<T> {
  /** the row from memory, else from `load` (kept unless a write overlapped the load) */
  read(id: string, load: () => Promise<T | null>): Promise<T | null>;
  /** runs a write of row `id`, forgetting it on both sides */
  writing<R>(id: string, write: () => Promise<R>): Promise<R>;
  /** runs a write that may touch any row, forgetting all of them on both sides */
  writingAll<R>(write: () => Promise<R>): Promise<R>;
  forgetAll(): void;
}

// `copy` hands out a copy, so that a caller changing a row does not change the kept one.
export function createRowCache<T>(opts: { max: number; copy: (row: T) => T }): RowCache<T> {
  const { max, copy } = opts;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`createRowCache: max must be a positive integer, got ${max}`);
  const rows = new Map<string, T>();
  const versions = new Map<string, number>();
  let epoch = 0;
  const touch = (id: string) => {
    rows.delete(id);
    versions.set(id, (versions.get(id) ?? 0) + 1);
  };
  const forgetAll = () => {
    rows.clear();
    epoch++;
  };
  return {
    async read(id, load) {
      const hit = rows.get(id);
      if (hit !== undefined) return copy(hit);
      const version = versions.get(id) ?? 0;
      const seen = epoch;
      const row = await load();
      if (row === null) return null;
      if ((versions.get(id) ?? 0) === version && epoch === seen) {
        // Oldest first out: a Map iterates in insertion order.
        if (rows.size >= max) rows.delete(rows.keys().next().value!);
        rows.set(id, row);
      }
      return copy(row);
    },
    async writing(id, write) {
      touch(id);
      try {
        return await write();
      } finally {
        touch(id);
      }
    },
    async writingAll(write) {
      forgetAll();
      try {
        return await write();
      } finally {
        forgetAll();
      }
    },
    forgetAll,
  };
}
