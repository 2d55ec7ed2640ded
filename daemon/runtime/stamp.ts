import { statSync } from 'node:fs';

// What a save changes (content, size, file), to tell whether a file changed since it was looked at.
export function stamp(p: string): string {
  try {
    const st = statSync(p);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return 'none';
  }
}
