// A unified diff (git's), shown unified or side by side, file by file.
import { useMemo } from 'preact/hooks';

interface Line {
  kind: 'add' | 'del' | 'ctx' | 'hunk';
  text: string;
  old?: number;
  new?: number;
}
interface FileDiff {
  name: string;
  lines: Line[];
  binary: boolean;
}

// git's unified diff into files and numbered lines.
export function parseDiff(text: string): FileDiff[] {
  const files: FileDiff[] = [];
  let cur: FileDiff | null = null;
  let o = 0;
  let n = 0;
  for (const raw of text.split('\n')) {
    if (raw.startsWith('diff --git ')) {
      cur = { name: raw.replace(/^diff --git a\/(.*) b\/.*$/, '$1'), lines: [], binary: false };
      files.push(cur);
      continue;
    }
    if (!cur) continue;
    if (raw.startsWith('+++ b/')) cur.name = raw.slice(6);
    else if (raw.startsWith('Binary files') || raw.startsWith('GIT binary patch')) cur.binary = true;
    else if (raw.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(raw);
      o = Number(m?.[1] ?? 0);
      n = Number(m?.[2] ?? 0);
      cur.lines.push({ kind: 'hunk', text: raw });
    } else if (cur.lines.length === 0 || cur.binary) continue;
    else if (raw.startsWith('+')) cur.lines.push({ kind: 'add', text: raw.slice(1), new: n++ });
    else if (raw.startsWith('-')) cur.lines.push({ kind: 'del', text: raw.slice(1), old: o++ });
    else if (raw.startsWith(' ')) cur.lines.push({ kind: 'ctx', text: raw.slice(1), old: o++, new: n++ });
  }
  return files;
}

// Side by side: deletions and additions of one run paired row by row.
function pairs(lines: Line[]): Array<[Line | null, Line | null]> {
  const out: Array<[Line | null, Line | null]> = [];
  for (let i = 0; i < lines.length; ) {
    const l = lines[i]!;
    if (l.kind === 'ctx' || l.kind === 'hunk') {
      out.push([l, l]);
      i++;
      continue;
    }
    const dels: Line[] = [];
    const adds: Line[] = [];
    while (i < lines.length && lines[i]!.kind === 'del') dels.push(lines[i++]!);
    while (i < lines.length && lines[i]!.kind === 'add') adds.push(lines[i++]!);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) out.push([dels[k] ?? null, adds[k] ?? null]);
  }
  return out;
}

export function DiffView({ text, split }: { text: string; split: boolean }) {
  const files = useMemo(() => parseDiff(text), [text]);
  return (
    <div class="diff">
      {files.map((f) => (
        <details open key={f.name} class="diff-file">
          <summary class="mono">{f.name}</summary>
          {f.binary ? (
            <p class="muted small">binary file</p>
          ) : (
            <table class={split ? 'split' : 'unified'}>
              <tbody>
                {split
                  ? pairs(f.lines).map(([a, b], i) =>
                      a?.kind === 'hunk' ? (
                        <tr key={i} class="hunk">
                          <td colSpan={4}>{a.text}</td>
                        </tr>
                      ) : (
                        <tr key={i}>
                          <td class="ln">{a?.old ?? ''}</td>
                          <td class={a ? a.kind : 'none'}>{a?.text ?? ''}</td>
                          <td class="ln">{b?.new ?? ''}</td>
                          <td class={b ? b.kind : 'none'}>{b?.text ?? ''}</td>
                        </tr>
                      ),
                    )
                  : f.lines.map((l, i) =>
                      l.kind === 'hunk' ? (
                        <tr key={i} class="hunk">
                          <td colSpan={3}>{l.text}</td>
                        </tr>
                      ) : (
                        <tr key={i} class={l.kind}>
                          <td class="ln">{l.old ?? ''}</td>
                          <td class="ln">{l.new ?? ''}</td>
                          <td>
                            {l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}
                            {l.text}
                          </td>
                        </tr>
                      ),
                    )}
              </tbody>
            </table>
          )}
        </details>
      ))}
    </div>
  );
}
