import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openPage, sharedBrowser } from '../helpers/browser.ts';
import { gate, readyTask, waitSessionEnd } from '../helpers/sessions.ts';

const browser = sharedBrowser();

test('the task page in Chromium: turns appear live as sessions end; two turns or a turn and the work compared; Restore confirmed, refused while an agent runs, and saying how to undo', async (t) => {
  const { d, repo, task } = await readyTask(t);
  const wt = path.join(repo, task.worktree_path);
  const { page, errors, failures } = await openPage(t, await browser());
  let accept = true;
  const asked: string[] = [];
  page.on('dialog', (dlg) => {
    asked.push(dlg.message());
    void (accept ? dlg.accept() : dlg.dismiss());
  });
  await page.goto(`http://127.0.0.1:${d.port}/#/tasks/${task.id}`);
  const turns = page.locator('section.turns');
  await turns.getByText('No turns yet').waitFor();

  // Sessions started through the API: their turns appear on the open page as they end.
  const session = async (prompt: string) => {
    const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt } });
    assert.equal(s.status, 201, s.text);
    await waitSessionEnd(d, s.json.id);
    return s.json.id as string;
  };
  const one = await session('write:a.txt=one');
  await turns.locator('tr[data-turn="1"]', { hasText: one.slice(0, 8) }).waitFor();
  const two = await session('write:a.txt=two');
  const row2 = turns.locator('tr[data-turn="2"]');
  await row2.waitFor();
  assert.deepEqual(await row2.locator('td').evaluateAll((tds) => tds.slice(0, 3).map((td) => td.textContent)), ['2', `fixture ${two.slice(0, 8)}`, '1']);

  // Turn 2's own changes: from turn 1 to turn 2, in the changes panel's diff view.
  const changes = page.locator('section.changes');
  await row2.getByRole('button', { name: 'Changes of turn 2' }).click();
  await changes.getByRole('status').filter({ hasText: '1 files changed from turn 1 to turn 2' }).waitFor();
  assert.equal(await changes.getByLabel('From').inputValue(), 'turn:1');
  assert.equal(await changes.getByLabel('To').inputValue(), 'turn:2');
  await changes.locator('.diff tr.del', { hasText: 'one' }).waitFor();
  await changes.locator('.diff tr.add', { hasText: 'two' }).waitFor();
  // Chosen in the selects: turn 1 against the base, then back to the whole work.
  await changes.getByLabel('To').selectOption('turn:1');
  await changes.getByLabel('From').selectOption('base');
  await changes.getByRole('status').filter({ hasText: '1 files changed from the base to turn 1' }).waitFor();
  await changes.locator('.diff tr.add', { hasText: 'one' }).waitFor();
  // One turn against the work as it is now.
  await turns.getByRole('button', { name: 'Turn 1 vs the work' }).click();
  await changes.getByRole('status').filter({ hasText: '1 files changed from turn 1 to the work' }).waitFor();
  await changes.locator('.diff tr.add', { hasText: 'two' }).waitFor();
  await changes.getByLabel('From').selectOption('base');
  await changes.getByRole('status').filter({ hasText: 'commits ahead of' }).waitFor();

  // While an agent runs, Restore is disabled and says why.
  const held = gate(t);
  const running = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `wait:${held.path}` } });
  assert.equal(running.status, 201, running.text);
  const restore1 = turns.getByRole('button', { name: 'Restore turn 1' });
  await turns.getByText('Restore waits: an agent of this task is running.').waitFor();
  assert.equal(await restore1.isDisabled(), true);
  held.release();
  await waitSessionEnd(d, running.json.id);
  await turns.locator('tr[data-turn="3"]').waitFor();
  await page.waitForFunction(() => !(document.querySelector('button[aria-label="Restore turn 1"]') as HTMLButtonElement).disabled);

  // Confirmed first: declined, nothing moves.
  accept = false;
  await restore1.click();
  assert.match(asked.at(-1)!, /Restore turn 1\?/);
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n');
  // Accepted: turn 1's files are back; the state before is turn 4, named as the undo.
  accept = true;
  await restore1.click();
  await turns.getByRole('status').filter({ hasText: 'Restored turn 1; the state before is saved as turn 4 — restore it to undo.' }).waitFor();
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'one\n');
  await turns.locator('tr[data-turn="4"]', { hasText: 'saved before restoring turn 1' }).waitFor();
  await changes.locator('.diff tr.add', { hasText: 'one' }).waitFor();
  // And undone through the saved turn.
  await turns.getByRole('button', { name: 'Restore turn 4' }).click();
  await turns.getByRole('status').filter({ hasText: 'Restored turn 4; the state before is saved as turn 5' }).waitFor();
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n');

  assert.deepEqual(errors, [], failures.join('\n'));
});
