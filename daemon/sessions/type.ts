import { GroveError } from '../errors.ts';
import { attachHolder } from '../terminal/client.ts';

// A follow-up to a running terminal session (DESIGN §21) is typed into it, as a person would:
// the text (pasted in brackets when it has several lines and the program reads pastes as one),
// then Enter in a frame of its own, so the program does not take the Enter as part of a paste.
export async function typeInto(ptySocket: string, sessionId: string, text: string): Promise<void> {
  let link;
  try {
    link = await attachHolder(ptySocket, null);
  } catch {
    throw new GroveError('SESSION_NOT_RUNNING', `session ${sessionId} has no terminal to type into: its program has ended`);
  }
  try {
    const body = text.includes('\n') ? `\x1b[200~${text}\x1b[201~` : text;
    link.send({ type: 'input', data: body });
    link.send({ type: 'input', data: '\r' });
  } finally {
    await link.close();
  }
}
