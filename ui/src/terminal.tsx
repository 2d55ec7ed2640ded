// A terminal session's screen on its card (DESIGN §21): xterm.ts's terminal in a box that
// Preact keeps, with a status line; only the connection's state passes through Preact, never the
// frames.
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { isBusy } from '../../schemas/session-status.ts';
import type { Session, TranscriptView } from '../../schemas/session.ts';
import { api, apiUrl, HOST } from './api.ts';
import { useLoad } from './hooks.ts';
import { Turns } from './output.tsx';
import type { LinkState } from './terminal-link.ts';
import type { Mounted } from './xterm.ts';

// A session under a pseudo-terminal (DESIGN §21): an agent's with interface "terminal", or a
// task's shell (kind "terminal", no agent).
export function isTerminal(s: Session): boolean {
  return s.interface === 'terminal';
}
export function isShell(s: Session): boolean {
  return s.kind === 'terminal';
}
// What a session's card calls it: its agent, or "shell".
export function sessionName(s: Session): string {
  return s.agent ?? 'shell';
}

// The address of a session's terminal, from `offset` (null: the screen as it is).
function socketUrl(sessionId: string, offset: number | null): string {
  const url = new URL(apiUrl(`/api/sessions/${sessionId}/terminal`), location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (offset !== null) url.searchParams.set('offset', String(offset));
  return url.href;
}

// What the status line says of the connection.
function describe(state: LinkState): string {
  switch (state.kind) {
    case 'connecting':
      return 'connecting…';
    case 'live':
      return 'live';
    case 'reconnecting':
      return 'reconnecting…';
    case 'exited':
      return state.code === null ? 'exited' : `exited ${state.code}`;
    case 'ended':
      return 'ended';
  }
}

export function TerminalView({ sessionId, autoFocus = false }: { sessionId: string; autoFocus?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const mounted = useRef<Mounted | null>(null);
  // The terminal's code comes in a chunk of its own: a focus asked before it is there waits for it.
  const focusing = useRef(autoFocus);
  const [state, setState] = useState<LinkState>({ kind: 'connecting' });
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    const el = box.current!;
    let gone = false;
    import('./xterm.ts').then(
      ({ mountTerminal }) => {
        if (gone) return;
        mounted.current = mountTerminal(el, (offset) => socketUrl(sessionId, offset), setState);
        if (focusing.current) mounted.current.focus();
      },
      (err: unknown) => !gone && setFailed(String(err)),
    );
    return () => {
      gone = true;
      mounted.current?.dispose();
      mounted.current = null;
    };
  }, [sessionId]);
  // Opened by the person (the task's Terminal button): typed into at once.
  useEffect(() => {
    focusing.current = autoFocus;
    if (!autoFocus) return;
    box.current!.scrollIntoView({ block: 'nearest' });
    mounted.current?.focus();
  }, [sessionId, autoFocus]);
  return (
    <div class="terminal" data-state={state.kind}>
      <div class="toolbar small">
        <span class={state.kind === 'reconnecting' ? 'muted reconnecting' : 'muted'} role="status">
          {failed === null ? describe(state) : `the terminal could not be loaded (${failed}): reload the page`}
        </span>
        <span class="muted">Ctrl+\ leaves the terminal</span>
      </div>
      <div class="terminal-box" ref={box} tabIndex={-1} aria-label="Terminal" />
    </div>
  );
}

// A terminal session's card body: its screen, from the start while it runs (or when `open`: the
// newest of a list); an ended one's on request, as each screen read again is a connection and up
// to the daemon's kept output. A saved host's is not shown here: the page reaches a host's API
// through this daemon, which forwards no WebSocket.
export function SessionTerminal({ session, open = false, autoFocus = false }: { session: Session; open?: boolean; autoFocus?: boolean }) {
  // Shown once, it stays while the page is open: the session's end does not take it away.
  const [shown, setShown] = useState(isBusy(session.status));
  useEffect(() => {
    if (open || autoFocus) setShown(true);
  }, [open, autoFocus]);
  if (HOST !== null) {
    return (
      <p class="muted small">
        A terminal on {HOST} is not shown here; in a terminal: <code>grove --host {HOST} attach {session.id.slice(0, 8)}</code>
      </p>
    );
  }
  if (!shown && !open && !autoFocus) {
    return (
      <button type="button" class="small" onClick={() => setShown(true)}>
        Show the terminal
      </button>
    );
  }
  return <TerminalView sessionId={session.id} autoFocus={autoFocus} />;
}

// A terminal session's conversation (DESIGN §21), read from the transcript its agent writes: the
// same items as a headless session's output. Read again when a turn ends (its result) and at the
// session's end; open once the session has ended, when the screen is no longer shown by itself.
export function SessionTranscript({ session }: { session: Session }) {
  const t = useLoad(() => api<TranscriptView>('GET', `/api/sessions/${session.id}/transcript`), [session.id, session.status, session.result?.text ?? null]);
  const v = t.value;
  if (!v || v.kind === null || v.lines.length === 0) return null;
  return (
    <details class="transcript" open={!isBusy(session.status)}>
      <summary class="small">Conversation, from {v.kind === 'claude' ? "Claude Code's" : "Codex's"} transcript</summary>
      <Turns lines={v.lines} n={v.lines.length} />
      {v.truncated ? <p class="muted small">Its first 32 MiB only.</p> : null}
    </details>
  );
}
