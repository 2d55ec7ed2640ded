import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentDefinition } from '../../schemas/config.ts';
import type { Reading } from '../agents/dialects.ts';
import { readTranscript, transcriptKind, transcriptPath, transcriptReader, type TranscriptKind, type TranscriptPlace } from '../agents/transcripts.ts';

// Where a terminal session's transcript is (DESIGN §21), recorded beside its files at launch:
// the place to look for it and how long it was then (a resumed conversation appends to the file
// of the one before, whose lines are not this session's).
interface Recorded extends TranscriptPlace {
  file: string | null;
  start: number;
}

// What the agent's environment says about where it keeps its transcripts; nothing else is kept.
const PLACE_ENV = ['HOME', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME'] as const;

const sizeOf = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

// Before the program runs: where its transcript will be, for an agent that writes one grove reads.
export async function recordTranscriptPlace(recordFile: string, def: AgentDefinition, place: TranscriptPlace): Promise<void> {
  if (transcriptKind(def) === null) return;
  const env = Object.fromEntries(PLACE_ENV.filter((k) => place.env[k] !== undefined).map((k) => [k, place.env[k]]));
  const file = await transcriptPath(def, place);
  const recorded: Recorded = { ...place, env, file, start: file !== null ? sizeOf(file) : 0 };
  mkdirSync(path.dirname(recordFile), { recursive: true, mode: 0o700 });
  writeFileSync(recordFile, JSON.stringify(recorded), { mode: 0o600 });
}

// What a round reads of the transcript: the reading with its new lines, and `advance()` once
// that reading is stored (a failed store reads the same lines again).
export interface TranscriptSource {
  peek(prev: Reading): Promise<{ reading: Reading; advance(): void }>;
}

// The transcript of a session whose place was recorded, read on from where it stood at launch;
// null when none was (a headless session, an agent grove reads no transcript of). A daemon that
// starts again reads it from that start, so its reading is made again whole, never counted twice.
export function transcriptSource(recordFile: string, def: AgentDefinition): TranscriptSource | null {
  const reader = transcriptReader(def);
  let recorded: Recorded;
  try {
    recorded = JSON.parse(readFileSync(recordFile, 'utf8')) as Recorded;
  } catch {
    return null;
  }
  if (reader === null) return null;
  let file = recorded.file;
  let offset = recorded.start;
  return {
    async peek(prev) {
      const same = { reading: prev, advance: () => {} };
      // Codex names its file once it has begun: looked for until found.
      file ??= await transcriptPath(def, recorded);
      if (file === null) return same;
      let read;
      try {
        read = await readTranscript(file, offset);
      } catch {
        return same; // not written yet
      }
      if (read.lines.length === 0) return same;
      return { reading: reader(prev, read.lines), advance: () => void (offset = read.offset) };
    },
  };
}

// The most of a transcript shown as a conversation: a longer one shows its first this many bytes.
const VIEW_MAX_BYTES = 32 * 1024 * 1024;

// A terminal session's transcript as its agent wrote it, from where it stood at launch: its kind
// and its whole lines (a line still being written is left out); null when the agent writes none
// grove reads. `truncated` when it is longer than a view shows.
export async function transcriptLines(recordFile: string, def: AgentDefinition): Promise<{ kind: TranscriptKind; lines: string[]; truncated: boolean } | null> {
  const kind = transcriptKind(def);
  if (kind === null) return null;
  let recorded: Recorded;
  try {
    recorded = JSON.parse(readFileSync(recordFile, 'utf8')) as Recorded;
  } catch {
    return { kind, lines: [], truncated: false }; // not started yet
  }
  const file = recorded.file ?? (await transcriptPath(def, recorded));
  const lines: string[] = [];
  if (file === null) return { kind, lines, truncated: false };
  let offset = recorded.start;
  for (;;) {
    if (offset - recorded.start >= VIEW_MAX_BYTES) return { kind, lines, truncated: true };
    let read;
    try {
      read = await readTranscript(file, offset);
    } catch {
      break; // not written yet
    }
    if (read.lines.length === 0) break;
    lines.push(...read.lines.filter((l) => l !== ''));
    offset = read.offset;
  }
  return { kind, lines, truncated: false };
}
