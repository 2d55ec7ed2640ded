// What bench/term-program.mjs prints, so that bench/terminal.ts can check every byte a client got.

// A line of the flood: its number, then letters that shift with it; 100 bytes with its newline.
export const FLOOD_LINE_BYTES = 100;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const LETTERS = ALPHABET.repeat(3);
export function floodLine(i) {
  const k = i % ALPHABET.length;
  return `${String(i).padStart(9, '0')} ${LETTERS.slice(k, k + FLOOD_LINE_BYTES - 11)}\n`;
}

// A line of the scrollback: coloured as an agent's output is (a number, a bold word, a dimmed
// path, plain text), about 130 columns, so the screen of a 200-column terminal keeps it unwrapped.
export function scrollLine(i) {
  const n = String(i).padStart(5, '0');
  const k = i % ALPHABET.length;
  return `\x1b[32m${n}\x1b[0m \x1b[1mstep\x1b[22m \x1b[2msrc/module-${k}/file.ts\x1b[0m ${LETTERS.slice(k, k + 60)} \x1b[33;4mwarn\x1b[0m ${i * 7}\n`;
}
