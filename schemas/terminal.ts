import { Type, type Static } from '@sinclair/typebox';

// A terminal session's frames (DESIGN §21): JSON text, on the WebSocket of
// GET /api/sessions/:id/terminal and, one per line, on the holder's own socket.

// The largest window either side may ask for, and the most one input frame may carry.
export const MAX_TERMINAL_DIM = 1000;
export const MAX_INPUT_BYTES = 1024 * 1024;
// A reconnect with ?offset= gets exactly what it missed from any place in the session's output
// file, which keeps it all; a new client of an ended session gets this much of its tail.
export const KEPT_OUTPUT_BYTES = 1024 * 1024;

const Offset = Type.Integer({ minimum: 0, description: "counts the session's output bytes (UTF-8) from 0" });
const Dim = Type.Integer({ minimum: 1, maximum: MAX_TERMINAL_DIM });

// What the server sends.
export const ScreenFrame = Type.Object(
  {
    type: Type.Literal('screen'),
    offset: Offset,
    cols: Dim,
    rows: Dim,
    data: Type.String({ description: 'escape sequences that redraw the screen (and its scrollback) as it is at offset' }),
  },
  { additionalProperties: false },
);
export const OutputFrame = Type.Object({ type: Type.Literal('output'), offset: Offset, data: Type.String() }, { additionalProperties: false });
export const ExitFrame = Type.Object(
  { type: Type.Literal('exit'), code: Type.Union([Type.Integer(), Type.Null()], { description: 'the exit status (128+n after signal n); null: not known' }) },
  { additionalProperties: false },
);
export const ServerFrame = Type.Union([ScreenFrame, OutputFrame, ExitFrame]);
export type ScreenFrame = Static<typeof ScreenFrame>;
export type OutputFrame = Static<typeof OutputFrame>;
export type ExitFrame = Static<typeof ExitFrame>;
export type ServerFrame = Static<typeof ServerFrame>;

// What a client sends. The input's size is checked in bytes apart (a JSON schema counts characters).
export const InputFrame = Type.Object({ type: Type.Literal('input'), data: Type.String({ minLength: 1 }) }, { additionalProperties: false });
export const ResizeFrame = Type.Object({ type: Type.Literal('resize'), cols: Dim, rows: Dim }, { additionalProperties: false });
export const ClientFrame = Type.Union([InputFrame, ResizeFrame]);
export type InputFrame = Static<typeof InputFrame>;
export type ResizeFrame = Static<typeof ResizeFrame>;
export type ClientFrame = Static<typeof ClientFrame>;

// The first line a client writes on the holder's socket: from where it wants the output (null:
// the screen as it is, then what comes).
export const AttachLine = Type.Object(
  { type: Type.Literal('attach'), offset: Type.Union([Offset, Type.Null()]) },
  { additionalProperties: false },
);
export type AttachLine = Static<typeof AttachLine>;

