import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { FSWatcher, watch } from 'chokidar';
import { ProjectConfig } from '../schemas/project-config.ts';
import { GroveError } from './http/errors.ts';
import type { Logger } from './log.ts';
import { compile, createAjv } from './validation.ts';

export const CONFIG_FILE = '.grove.json';

interface Cached {
  key: string;
  value: ProjectConfig | GroveError;
}

// Reads, validates and watches each project's .grove.json. Reads check the file's identity
// (inode, size, mtime) so a change applies to the very next task even before chokidar reports
// it; the watcher is what reports an invalid edit in the log as soon as it is saved.
export function createProjectConfigs(opts: { log: Logger }) {
  const { log } = opts;
  const validate = compile(createAjv(), ProjectConfig);
  const cache = new Map<string, Cached>();
  const roots = new Set<string>();
  let watcher: FSWatcher | null = null;

  function parse(file: string): ProjectConfig | GroveError {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      return new GroveError('CONFIG_INVALID', `${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return new GroveError('CONFIG_INVALID', `${file} is not valid JSON: ${(err as Error).message}`, {
        errors: [{ path: '/', message: 'is not valid JSON' }],
      });
    }
    if (!validate(value)) {
      const errors = validate.issues();
      return new GroveError('CONFIG_INVALID', `${file} is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
    }
    return value;
  }

  function read(projectPath: string): ProjectConfig | GroveError {
    const file = path.join(projectPath, CONFIG_FILE);
    let key: string;
    try {
      const st = statSync(file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      key = 'unreadable';
    }
    const hit = cache.get(file);
    if (hit && hit.key === key) return hit.value;
    const value = parse(file);
    cache.set(file, { key, value });
    return value;
  }

  function ensureWatcher(): FSWatcher {
    if (watcher) return watcher;
    watcher = watch([], {
      ignoreInitial: true,
      depth: 0,
      // Only the project roots themselves and their .grove.json: never descend into worktrees.
      ignored: (p: string) => !roots.has(p) && path.basename(p) !== CONFIG_FILE,
    });
    watcher.on('all', (event, p) => {
      if (path.basename(p) !== CONFIG_FILE) return;
      const root = path.dirname(p);
      if (!roots.has(root)) return;
      const v = read(root);
      if (v instanceof GroveError) log.warn({ file: p, errors: v.errors }, `${CONFIG_FILE} is invalid; tasks of this project will be refused until it is fixed: ${v.detail}`);
      else log.info({ file: p, event }, `${CONFIG_FILE} ${event === 'unlink' ? 'removed' : 'loaded'}`);
    });
    watcher.on('error', (err) => log.warn({ err }, 'config watcher error'));
    return watcher;
  }

  return {
    // The project's config, or CONFIG_INVALID naming the file and the JSON path.
    load(projectPath: string): ProjectConfig {
      const v = read(projectPath);
      if (v instanceof GroveError) throw v;
      return v;
    },
    watch(projectPath: string): void {
      if (roots.has(projectPath)) return;
      roots.add(projectPath);
      ensureWatcher().add(projectPath);
    },
    unwatch(projectPath: string): void {
      if (!roots.delete(projectPath)) return;
      watcher?.unwatch(projectPath);
      cache.delete(path.join(projectPath, CONFIG_FILE));
    },
    async close(): Promise<void> {
      const w = watcher;
      watcher = null;
      roots.clear();
      await w?.close();
    },
  };
}

export type ProjectConfigs = ReturnType<typeof createProjectConfigs>;
