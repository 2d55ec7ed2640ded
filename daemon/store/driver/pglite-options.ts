import path from 'node:path';

// The folder inside the data folder that holds PGlite's files.
export function pgdataDir(dataDir: string): string {
  return path.join(dataDir, 'pgdata');
}

// Small buffers keep the idle daemon small: grove's working set is a few thousand rows hot.
export const PGLITE_CONF = [
  'shared_buffers=16MB',
  'work_mem=2MB',
  'maintenance_work_mem=8MB',
  'temp_buffers=1MB',
  'wal_buffers=512kB',
  'max_connections=4',
];
