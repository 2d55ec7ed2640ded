// The program bench/terminal.ts runs in a terminal session and under a bare node-pty: it needs a
// real terminal, reads keys in raw mode, says `ready`, waits for `g`, then prints, says `done`
// and waits for `q` to quit (status 0). What it prints is `floodLine`/`scrollLine` of
// bench/term-lines.mjs, so a reader can check every byte.
// Usage: node term-program.mjs flood:<bytes per second>:<seconds> | scroll:<lines>
import { FLOOD_LINE_BYTES, floodLine, scrollLine } from './term-lines.mjs';

const out = (s) => process.stdout.write(s);
if (!process.stdin.isTTY || !process.stdout.isTTY) {
  out('tty no\n');
  process.exit(4);
}
const [mode, a, b] = (process.argv[2] ?? '').split(':');
process.stdin.setRawMode(true);

function flood(rate, seconds) {
  const total = Math.floor((rate * seconds) / FLOOD_LINE_BYTES);
  const t0 = performance.now();
  let i = 0;
  // Every 10 ms, the lines due by then (a write blocks while the terminal is behind).
  const tick = () => {
    const due = Math.min(total, Math.floor((((performance.now() - t0) / 1000) * rate) / FLOOD_LINE_BYTES));
    if (due > i) {
      let s = '';
      for (; i < due; i++) s += floodLine(i);
      out(s);
    }
    if (i < total) return void setTimeout(tick, 10);
    out('done\n');
  };
  tick();
}

function scroll(lines) {
  for (let i = 0; i < lines; i += 500) {
    let s = '';
    for (let j = i; j < Math.min(lines, i + 500); j++) s += scrollLine(j);
    out(s);
  }
  out('done\n');
}

out('ready\n');
let started = false;
process.stdin.on('data', (chunk) => {
  const keys = chunk.toString();
  if (keys.includes('q')) process.exit(0);
  if (!keys.includes('g') || started) return;
  started = true;
  if (mode === 'flood') flood(Number(a), Number(b));
  else if (mode === 'scroll') scroll(Number(a));
  else {
    out(`unknown mode ${mode}\n`);
    process.exit(2);
  }
});
