import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { FSWatcher, watch } from 'chokidar';
import { MAX_ARG_BYTES } from '../../schemas/common.ts';
import { MAX_CONFIG_BYTES, ProjectConfig } from '../../schemas/project-config.ts';
import { GroveError } from '../errors.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { stamp } from '../runtime/stamp.ts';
import { createSignal, type Listen } from '../runtime/signal.ts';
import { compile, createAjv } from '../runtime/validation.ts';
import { sandboxIssues } from '../sandbox/settings.ts';

export const CONFIG_FILE = '.grove.json';
// Past chokidar's throttle of changes to one file, which drops the later ones.
const SETTLE_MS = 100;

// Limits the schema cannot express: sizes in bytes of what becomes an argument or env string
// (a setup command runs as `sh -c <command>`); past MAX_ARG_BYTES it could never run.
function argLimitIssues(config: ProjectConfig): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  for (const key of ['setup', 'check'] as const) {
    for (const [i, command] of (config[key] ?? []).entries()) {
      if (Buffer.byteLength(command) > MAX_ARG_BYTES) out.push({ path: `/${key}/${i}`, message: `is longer than ${MAX_ARG_BYTES} bytes, the most one command may hold` });
    }
  }
  for (const [name, value] of Object.entries(config.env ?? {})) {
    if (Buffer.byteLength(`${name}=${value}`) > MAX_ARG_BYTES) {
      out.push({ path: `/env/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, message: `with its name is longer than ${MAX_ARG_BYTES} bytes, the most one environment variable may hold` });
    }
  }
  return out;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

// Reads, validates and watches each project's .grove.json: every task creation and session
// start reads it afresh; the watcher reports an invalid edit in the log as soon as it is saved.
export function createProjectConfigs(opts: { log: Logger; home?: string }) {
  const { log } = opts;
  // `~` of `.grove.json` `sandbox` paths: the daemon's user's home.
  const home = opts.home ?? (process.env.HOME || homedir());
  const validate = compile(createAjv(), ProjectConfig);
  const roots = new Set<string>();
  const watchers = new Map<string, FSWatcher>();
  // A change looked at again once chokidar's throttle has passed, by file.
  const settling = new Map<string, NodeJS.Timeout>();
  // The error last warned of per project and use (loadOrNone), so a warning is not repeated at every use.
  const warned = new Map<string, Map<string, string>>();
  // A project's .grove.json was written or removed (its root): the warm pool follows it.
  const changes = createSignal<string>();

  // Reads the file without ever blocking or reading without bound: a FIFO, a device or a
  // symlink to one (/dev/zero) would hang or exhaust the daemon, which reads it synchronously.
  function readText(file: string, projectPath: string): string | GroveError {
    const refuse = (why: string) =>
      new GroveError('CONFIG_INVALID', `${file} ${why}`, { errors: [{ path: '/', message: why }] });
    let real: string;
    try {
      real = realpathSync(file);
    } catch (err) {
      return refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    // The file is the repository's: a symlink out of it would make grove read (and quote in
    // its errors) any file the daemon's user can read. A link within the project is fine.
    const rel = path.relative(projectPath, real);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return refuse(`is a symlink to ${real}, outside the project`);
    let fd: number;
    try {
      fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (err) {
      return refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return refuse('is not a regular file');
      if (st.size > MAX_CONFIG_BYTES) return refuse(`is ${st.size} bytes; the limit is ${MAX_CONFIG_BYTES}`);
      // Room for the size fstat gave and one byte more, so that a file grown since is seen; it is
      // read on, up to one byte past the limit. Read at every use: not a megabyte each time.
      let buf = Buffer.allocUnsafe(st.size + 1);
      let size = 0;
      for (let n = -1; n !== 0; size += n) {
        if (size === buf.length) {
          if (size > MAX_CONFIG_BYTES) break;
          buf = Buffer.concat([buf, Buffer.allocUnsafe(Math.min(buf.length, MAX_CONFIG_BYTES + 1 - buf.length))]);
        }
        n = readSync(fd, buf, size, buf.length - size, null);
      }
      if (size > MAX_CONFIG_BYTES) return refuse(`is larger than ${MAX_CONFIG_BYTES} bytes`);
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, size));
      } catch {
        // Decoding leniently would turn bad bytes into U+FFFD and run a different command.
        return refuse('is not valid UTF-8');
      }
    } catch (err) {
      return refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    } finally {
      closeSync(fd);
    }
  }

  function parse(file: string, projectPath: string): ProjectConfig | GroveError {
    const text = readText(file, projectPath);
    if (text instanceof GroveError) return text;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return new GroveError('CONFIG_INVALID', `${file} is not valid JSON: ${(err as Error).message}`, {
        errors: [{ path: '/', message: 'is not valid JSON' }],
      });
    }
    const errors = validate(value) ? [...argLimitIssues(value), ...sandboxIssues(value, projectPath, home)] : validate.issues();
    if (errors.length > 0) {
      return new GroveError('CONFIG_INVALID', `${file} is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
    }
    return value as ProjectConfig;
  }

  // Read at every use, so a change applies to the very next task even before chokidar reports
  // it. The entry itself decides whether there is a config: a dangling symlink is an error,
  // not a missing file.
  function read(projectPath: string): ProjectConfig | GroveError {
    // A watched root that was removed and is back: watched again from its next use.
    if (roots.has(projectPath) && !watchers.has(projectPath) && existsSync(projectPath)) watchers.set(projectPath, watchRoot(projectPath));
    const file = path.join(projectPath, CONFIG_FILE);
    if (!existsSync(file) && !isLink(file)) return {};
    return parse(file, projectPath);
  }

  const report = (event: string, p: string, root: string) => {
    const v = read(root);
    if (v instanceof GroveError) log.warn({ file: p, errors: v.errors }, `${CONFIG_FILE} is invalid; tasks of this project will be refused until it is fixed: ${v.detail}`);
    else log.info({ file: p, event }, `${CONFIG_FILE} ${event === 'unlink' ? 'removed' : 'loaded'}`);
    changes.changed(root);
  };

  // One watcher per project, so that its `ready` says when chokidar has the folder: a save made
  // between `watch()` and that moment is not reported by chokidar (the file then counts as
  // initial), so it is looked for at `ready`.
  function watchRoot(root: string): FSWatcher {
    const file = path.join(root, CONFIG_FILE);
    const before = stamp(file);
    const w = watch(root, {
      ignoreInitial: true,
      depth: 0,
      // Only the project root itself and its .grove.json: never descend into worktrees.
      ignored: (p: string) => p !== root && path.basename(p) !== CONFIG_FILE,
    });
    w.on('all', (event, p) => {
      // The root itself removed: chokidar would then watch for it from the nearest folder that is
      // left (the parent, /tmp, $HOME), reading all of that folder again at its every change. The
      // config is gone with it; the watch ends until the root is used again (read()).
      if (event === 'unlinkDir' && p === root) {
        if (watchers.get(root) !== w) return;
        watchers.delete(root);
        void w.close();
        report('unlink', file, root);
        return;
      }
      if (path.basename(p) !== CONFIG_FILE || path.dirname(p) !== root || !roots.has(root)) return;
      // chokidar drops a change that closely follows one it reported: a save read half-done
      // (truncated, not yet written) would be the last the warm pool heard of. The file is looked
      // at once more after that window, and reported again if it changed since.
      const seen = stamp(p);
      report(event, p, root);
      clearTimeout(settling.get(p));
      settling.set(
        p,
        setTimeout(() => {
          settling.delete(p);
          if (roots.has(root) && stamp(p) !== seen) report('change', p, root);
        }, SETTLE_MS).unref(),
      );
    });
    w.once('ready', () => {
      if (roots.has(root) && stamp(file) !== before) report('change', file, root);
    });
    w.on('error', (err) => log.warn({ err }, 'config watcher error'));
    return w;
  }

  return {
    changes: changes as Listen<string>,
    // The project's config, or CONFIG_INVALID naming the file and the JSON path.
    load(projectPath: string): ProjectConfig {
      const v = read(projectPath);
      if (v instanceof GroveError) throw v;
      return v;
    },
    // For what goes on without the config (an archive's teardown, approval rules, the warm pool):
    // an invalid one counts as none, with a warning saying `what` that means, once per project
    // and use until its error changes. Only CONFIG_INVALID is taken so: any other throw is a bug.
    loadOrNone(projectPath: string, what: string): ProjectConfig {
      const v = read(projectPath);
      if (!(v instanceof GroveError)) {
        warned.delete(projectPath);
        return v;
      }
      let said = warned.get(projectPath);
      if (!said) warned.set(projectPath, (said = new Map()));
      if (said.get(what) !== v.detail) {
        said.set(what, v.detail);
        log.warn({ project: projectPath, errors: v.errors }, `${CONFIG_FILE} is invalid, so ${what}: ${v.detail}`);
      }
      return {};
    },
    watch(projectPath: string): void {
      if (roots.has(projectPath)) return;
      roots.add(projectPath);
      watchers.set(projectPath, watchRoot(projectPath));
    },
    unwatch(projectPath: string): void {
      if (!roots.delete(projectPath)) return;
      const w = watchers.get(projectPath);
      watchers.delete(projectPath);
      void w?.close();
    },
    close: once(async () => {
      roots.clear();
      for (const t of settling.values()) clearTimeout(t);
      await Promise.all([...watchers.values()].map((w) => w.close()));
      watchers.clear();
    }),
  };
}

export type ProjectConfigs = ReturnType<typeof createProjectConfigs>;
