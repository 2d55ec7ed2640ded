import { loadPty, spawnPty } from './program.ts';

// How long the check's program gets to start and end.
const CHECK_MS = 5000;

// Whether terminal sessions can run here (DESIGN §21), checked for real: node-pty loaded and a
// tiny program run under a pseudo-terminal to its end, which finds its stdout to be a terminal.
export async function checkPty(): Promise<{ ok: true } | { ok: false; detail: string }> {
  let pty;
  try {
    pty = await loadPty();
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
  const probe = 'process.exit(process.stdout.isTTY ? 0 : 9)';
  let term;
  try {
    term = spawnPty(pty, process.execPath, ['-e', probe], { cols: 80, rows: 24, cwd: process.cwd(), env: process.env });
  } catch (err) {
    return { ok: false, detail: `cannot start a program under a pseudo-terminal: ${(err as Error).message}` };
  }
  let output = '';
  term.onData((d) => void (output += d));
  const started = term;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      started.kill('SIGKILL');
      resolve({ ok: false, detail: `a program under a pseudo-terminal did not end within ${CHECK_MS} ms` });
    }, CHECK_MS);
    started.onExit(({ exitCode, signal }) => {
      clearTimeout(timer);
      if (exitCode === 0 && !signal) return resolve({ ok: true });
      const said = output.trim().slice(0, 200);
      const how = signal ? `was killed by signal ${signal}` : exitCode === 9 ? 'found no terminal on its stdout' : `exited ${exitCode}`;
      resolve({ ok: false, detail: `a program under a pseudo-terminal ${how}${said ? `: ${said}` : ''}` });
    });
  });
}
