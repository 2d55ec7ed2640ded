import { GroveError } from '../errors.ts';
import { attachHolder, type HolderLink } from '../terminal/client.ts';

// How long the Enter waits for the program to draw something after the text is sent (it has read
// it, as a rule), and then how long still. Keys that come faster than a person types are a paste
// to some interfaces, and an Enter among them a newline in the input, not a submit: Codex's
// (0.171.0) does so with the text and the Enter in one read, or read right after each other.
// Claude Code's takes a bracketed paste with an Enter right behind it as the paste alone.
export const ECHO_WAIT_MS = 2000;
export const ENTER_PAUSE_MS = 100;

// Resolves at the first frame on the link that `pred` accepts, or once `ms` have passed or the link has closed.
function frameOf(link: HolderLink, pred: (type: string) => boolean, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    link.onFrame((f) => {
      if (pred(f.type)) finish();
    });
    link.onClose(finish);
  });
}

// A follow-up to a running terminal session (DESIGN §21) is typed into it, as a person would:
// the text (pasted in brackets when it has several lines and the program reads pastes as one),
// then Enter in a frame of its own once the program has taken the text in (see above).
export async function typeInto(ptySocket: string, sessionId: string, text: string): Promise<void> {
  let link;
  try {
    link = await attachHolder(ptySocket, null);
  } catch {
    throw new GroveError('SESSION_NOT_RUNNING', `session ${sessionId} has no terminal to type into: its program has ended`);
  }
  try {
    // The screen comes first: output after it is the program's since then.
    await frameOf(link, (type) => type === 'screen', ECHO_WAIT_MS);
    const body = text.includes('\n') ? `\x1b[200~${text}\x1b[201~` : text;
    link.send({ type: 'input', data: body });
    await frameOf(link, (type) => type === 'output', ECHO_WAIT_MS);
    await new Promise((r) => setTimeout(r, ENTER_PAUSE_MS));
    link.send({ type: 'input', data: '\r' });
  } finally {
    await link.close();
  }
}
