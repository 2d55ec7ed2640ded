// The types of bench/term-lines.mjs, for bench/terminal.ts.
export const FLOOD_LINE_BYTES: number;
export function floodLine(i: number): string;
export function scrollLine(i: number): string;
