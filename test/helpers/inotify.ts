import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

// Whether this process has an inotify watch on `dir` (what fs.watch and chokidar make on
// Linux), read from /proc/self/fdinfo of its inotify descriptors: a check made now, asked again
// even once the folder is gone.
export function folderWatched(dir: string): () => boolean {
  const ino = `ino:${statSync(dir).ino.toString(16)} `;
  return () => watching(ino);
}

function watching(ino: string): boolean {
  for (const fd of readdirSync('/proc/self/fd')) {
    let link: string;
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // the descriptor that listed the folder, closed by now
    }
    if (link === 'anon_inode:inotify' && readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').some((l) => l.startsWith('inotify ') && l.includes(ino))) return true;
  }
  return false;
}
