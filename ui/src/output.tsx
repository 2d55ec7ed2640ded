// A session's output, live: readable turns when the agent speaks JSON, else the raw lines in a
// virtualised list (only the rows in view are in the page, so 100,000 lines stay responsive).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { OutputLine } from '../../schemas/output.ts';
import type { Session } from '../../schemas/session.ts';
import { apiUrl } from './api.ts';
import { RETRY_MS } from './live.ts';
import { isStructured, itemsOf } from './turns.ts';

const ROW = 18; // px, the raw view's fixed line height (style.css .raw)
const HEIGHT = 360; // px, fixed: streaming output never moves the page around it
const SHOWN_ITEMS = 500;

// Follows GET /api/sessions/:id/output as SSE until its end. EventSource resumes by itself after a
// dropped connection; a refused one (its host away) is opened again after the last line shown.
function useOutput(sessionId: string): { lines: OutputLine[]; n: number; ended: boolean } {
  const lines = useRef<OutputLine[]>([]);
  const [n, setN] = useState(0);
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    lines.current = [];
    setN(0);
    setEnded(false);
    let src: EventSource;
    let frame = 0;
    let retry: ReturnType<typeof setTimeout> | undefined;
    // One render per frame however fast lines come.
    const flush = () => {
      frame = 0;
      setN(lines.current.length);
    };
    const open = () => {
      const after = lines.current.at(-1)?.seq ?? 0;
      src = new EventSource(apiUrl(`/api/sessions/${sessionId}/output?after=${after}`));
      src.addEventListener('line', (m) => {
        const line = JSON.parse((m as MessageEvent<string>).data) as OutputLine;
        if (line.seq <= (lines.current.at(-1)?.seq ?? 0)) return;
        lines.current.push(line);
        frame ||= requestAnimationFrame(flush);
      });
      src.addEventListener('end', () => {
        src.close();
        setN(lines.current.length);
        setEnded(true);
      });
      src.onerror = () => {
        if (src.readyState === EventSource.CLOSED) retry = setTimeout(open, RETRY_MS);
      };
    };
    open();
    return () => {
      src.close();
      clearTimeout(retry);
      cancelAnimationFrame(frame);
    };
  }, [sessionId]);
  return { lines: lines.current, n, ended };
}

export function OutputView({ session }: { session: Session }) {
  const { lines, n, ended } = useOutput(session.id);
  const structured = isStructured(lines);
  const [raw, setRaw] = useState(false);
  return (
    <div class="output" data-lines={n} data-ended={ended ? 'true' : 'false'}>
      <div class="toolbar small">
        {structured ? (
          <button type="button" class="small" onClick={() => setRaw(!raw)} aria-pressed={raw}>
            {raw ? 'Readable' : 'Raw lines'}
          </button>
        ) : null}
        {/* last, and the count last in it, so that its growth moves nothing */}
        <span class="muted">
          {`${ended ? '' : 'live · '}${n} lines`}
        </span>
      </div>
      {structured && !raw ? <Turns lines={lines} n={n} /> : <RawLines lines={lines} n={n} />}
    </div>
  );
}

// A scroll box kept at its end while the reader is there, left alone once they scroll up.
function useFollow(n: number, scrolled?: (el: HTMLDivElement) => void) {
  const ref = useRef<HTMLDivElement>(null);
  const follow = useRef(true);
  // Where the box was put: its own scroll event comes after more lines may have made it taller,
  // and must not read as the reader leaving the end.
  const pinned = useRef(-1);
  useEffect(() => {
    const el = ref.current;
    if (el && follow.current) {
      el.scrollTop = el.scrollHeight;
      pinned.current = el.scrollTop;
    }
  }, [n]);
  const onScroll = () => {
    const el = ref.current!;
    if (el.scrollTop !== pinned.current) follow.current = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW;
    scrolled?.(el);
  };
  return { ref, onScroll };
}

export function Turns({ lines, n }: { lines: OutputLine[]; n: number }) {
  const items = useMemo(() => lines.flatMap(itemsOf), [lines, n]);
  const [all, setAll] = useState(false);
  const shown = all ? items : items.slice(-SHOWN_ITEMS);
  const follow = useFollow(items.length);
  return (
    <div class="turns" {...follow} tabIndex={0} role="log" aria-label="Conversation output">
      {shown.length < items.length ? (
        <button type="button" class="small" onClick={() => setAll(true)}>
          Show {items.length - shown.length} earlier
        </button>
      ) : null}
      {shown.map((it, i) => (
        <div key={`${it.seq}-${i}`} class={`item ${it.kind}`}>
          {it.title ? <span class="item-title">{it.title}</span> : null}
          <pre>{it.text}</pre>
        </div>
      ))}
    </div>
  );
}

function RawLines({ lines, n }: { lines: OutputLine[]; n: number }) {
  const [top, setTop] = useState(0);
  const follow = useFollow(n, (el) => setTop(el.scrollTop));
  const first = Math.max(0, Math.floor(top / ROW) - 20);
  const last = Math.min(n, Math.ceil((top + HEIGHT) / ROW) + 20);
  const rows = [];
  for (let i = first; i < last; i++) {
    const l = lines[i]!;
    rows.push(
      <div key={l.seq} class={l.stream === 'stderr' ? 'row err' : 'row'} style={{ top: `${i * ROW}px` }}>
        <span class="seq">{l.seq}</span>
        {l.text}
      </div>,
    );
  }
  return (
    <div class="raw" {...follow} tabIndex={0} role="log" aria-label="Output lines">
      <div class="raw-inner" style={{ height: `${n * ROW}px` }}>
        {rows}
      </div>
    </div>
  );
}
