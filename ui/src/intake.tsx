// A project's intake on its board (DESIGN §20): its watch of the GitHub repository's labelled
// issues (how it stands, its last and next poll), what it took or refused and why, a form to set
// it and a button to stop it. Read again at each intake event of the project.
import { useEffect, useRef } from 'preact/hooks';
import type { Mode } from '../../schemas/config.ts';
import type { CreateIntake, Intake } from '../../schemas/intake.ts';
import { AGENT_CODES, AgentChoice, useAgents } from './agents.tsx';
import { api, ApiError, messageOf } from './api.ts';
import { ActionError, Field, FormError, fieldError, inputProps, useSubmit } from './form.tsx';
import { useAction, useLoad } from './hooks.ts';
import { itemWords, pollWords, watchMark } from './intake-words.ts';
import type { Live } from './live.ts';

// How many of its newest items the panel shows; the API keeps the last 100.
const ITEMS_SHOWN = 20;
// The soonest the watch is read again after its next poll was due (an interval may be 1 s).
const REREAD_MIN_MS = 5000;

const LANDS: Array<{ value: Intake['land']; text: string }> = [
  { value: 'pr', text: 'a pull request (until grove opens them: waits for review)' },
  { value: 'none', text: 'waits for review' },
  { value: 'queue', text: 'goes to the merge queue' },
];

const when = (iso: string) => new Date(iso).toLocaleString();

// The project's intake; null where it has none (the API's 404).
async function readIntake(projectId: string): Promise<Intake | null> {
  try {
    return await api<Intake>('GET', `/api/projects/${projectId}/intake`);
  } catch (err) {
    if (err instanceof ApiError && err.problem.status === 404) return null;
    throw err;
  }
}

export function IntakePanel({ live, projectId }: { live: Live; projectId: string }) {
  const seq = live.state.intakeSeq.get(projectId) ?? 0;
  const { value: w, error, reload } = useLoad(() => readIntake(projectId), [projectId, seq]);
  // A poll's outcome has no event (only what it took or refused has): the watch is read again once
  // its next poll is due, so that a refused token or a spent limit shows without a reload.
  const next = w?.next_poll_at ?? null;
  useEffect(() => {
    if (next === null) return;
    const timer = setTimeout(reload, Math.max(Date.parse(next) - Date.now() + 1000, REREAD_MIN_MS));
    return () => clearTimeout(timer);
  }, [next]);
  return (
    <section class="panel intake" aria-label="Set the intake">
      <h2>Intake</h2>
      {error !== undefined ? <p class="form-error">{messageOf(error)}</p> : null}
      {w === null ? <p class="muted small">Not watching: each open issue of the project's GitHub repository that carries a label can become a task, once.</p> : null}
      {w ? <Watch intake={w} live={live} onRemoved={reload} /> : null}
      {w !== undefined ? <SetIntake key={w ? `${w.repository}|${w.label}|${w.land}|${w.interval_s}` : 'none'} projectId={projectId} current={w} onSet={reload} /> : null}
    </section>
  );
}

// The watch: where and what, how it stands, its polls, its items; and Stop watching.
function Watch({ intake: w, live, onRemoved }: { intake: Intake; live: Live; onRemoved: () => void }) {
  const { busy, error, run } = useAction();
  const mark = watchMark(w, when);
  const remove = () => run(async () => (await api('DELETE', `/api/projects/${w.project_id}/intake`), onRemoved()));
  const last = w.last_poll;
  return (
    <div class="watch" data-state={w.state}>
      <div class="automation-head">
        <span class="mono">{w.repository}</span>
        <span class="badge label" title="the label an issue carries to become a task">
          {w.label}
        </span>
        <span class={`badge watch-${mark.tone}`} role={mark.tone === 'ok' ? undefined : 'status'}>
          {mark.text}
        </span>
        {w.source === 'file' ? <span class="muted small">from .grove.json</span> : null}
        <button type="button" class="small" onClick={remove} disabled={busy}>
          Stop watching
        </button>
      </div>
      <p class="muted small polls">
        {last ? (
          <>
            last poll <time dateTime={last.at}>{when(last.at)}</time>: <span class="poll-outcome">{pollWords(last.outcome)}</span>
          </>
        ) : (
          'not polled yet'
        )}
        {w.next_poll_at ? (
          <>
            ; next <time class="next-poll" dateTime={w.next_poll_at}>{when(w.next_poll_at)}</time>
          </>
        ) : null}
        {`; every ${w.interval_s} s, land ${w.land}${w.session.agent ? `, ${w.session.agent}` : ''}`}
      </p>
      {last?.error && w.state !== 'polling' ? (
        <p class="form-error poll-error" role="alert">
          {last.error}
        </p>
      ) : null}
      <ActionError error={error} />
      {w.items.length === 0 ? (
        <p class="muted small">No issue taken or refused yet.</p>
      ) : (
        <ol class="runs intake-items" aria-label="Issues">
          {w.items.slice(0, ITEMS_SHOWN).map((i) => (
            <li key={i.label_event} data-issue={i.number} data-outcome={i.outcome}>
              <a href={i.url} target="_blank" rel="noreferrer">
                #{i.number} {i.title}
              </a>{' '}
              <span class={`status intake-${i.outcome}`}>{i.outcome}</span> <span class="small">{itemWords(i)}</span>{' '}
              {i.task_id ? (
                <a class="small" href={`#/tasks/${i.task_id}`} title={live.state.tasks.get(i.task_id)?.name}>
                  its task
                </a>
              ) : null}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

// Setting the watch (a second one replaces it): the label, the repository (default the project's
// origin on GitHub), the session each issue's task starts, where its work goes, the interval.
// The API's messages show at their fields, whose ids are their own: the Automations form on the
// same board has fields of the same names.
function SetIntake({ projectId, current, onSet }: { projectId: string; current: Intake | null; onSet: () => void }) {
  const agents = useAgents();
  const box = useRef<HTMLDetailsElement>(null);
  const { error, busy, onSubmit } = useSubmit(async (f) => {
    const text = (k: string) => String(f.get(k) ?? '');
    const body: CreateIntake = { provider: 'github', label: text('label'), land: text('land') as Intake['land'], session: { mode: text('mode') as Mode } };
    if (text('repository')) body.repository = text('repository');
    // No agent to choose (none installed): the project's default, or the API's reason at the field.
    if (text('agent')) body.session!.agent = text('agent');
    if (text('prompt')) body.session!.prompt = text('prompt');
    if (text('interval_s')) body.interval_s = Number(text('interval_s'));
    await api<Intake>('POST', `/api/projects/${projectId}/intake`, body);
    box.current!.open = false;
    onSet();
  });
  const labelError = fieldError(error, 'label');
  const repositoryError = fieldError(error, 'repository');
  const promptError = fieldError(error, 'session/prompt');
  const landError = fieldError(error, 'land');
  const intervalError = fieldError(error, 'interval_s');
  return (
    <details class="new-automation set-intake" ref={box}>
      <summary>{current ? 'Change the watch' : 'Watch issues'}</summary>
      <form class="form" onSubmit={onSubmit} aria-label="Set the intake">
        <Field label="Label" name="label" id="intake-label" error={labelError} hint="An open issue becomes a task once someone who may write to the repository adds this label.">
          <input {...inputProps('label', labelError, 'intake-label')} required defaultValue={current?.label} />
        </Field>
        <Field label="Repository" name="repository" id="intake-repository" error={repositoryError} hint="owner/name on GitHub; empty: the project's origin.">
          <input {...inputProps('repository', repositoryError, 'intake-repository')} class="mono" defaultValue={current?.repository} />
        </Field>
        <AgentChoice agents={agents} error={error} at="session/" ids="intake-" />
        <Field label="Instructions" name="prompt" id="intake-prompt" error={promptError} hint="Optional: what the agent is told around the issue's text, which it is given as data.">
          <textarea {...inputProps('prompt', promptError, 'intake-prompt')} rows={2} defaultValue={current?.session.prompt} />
        </Field>
        <Field label="Its work" name="land" id="intake-land" error={landError}>
          <select {...inputProps('land', landError, 'intake-land')}>
            {LANDS.map((l) => (
              <option key={l.value} value={l.value} selected={l.value === (current?.land ?? 'pr')}>
                {l.text}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Every (seconds)" name="interval_s" id="intake-interval_s" error={intervalError} hint="How often GitHub is asked; 60 by default. Unchanged issues cost none of the rate limit.">
          <input {...inputProps('interval_s', intervalError, 'intake-interval_s')} type="number" step="any" defaultValue={current ? String(current.interval_s) : undefined} />
        </Field>
        <FormError error={error} fields={['label', 'repository', 'session/prompt', 'session/agent', 'session/mode', 'land', 'interval_s']} codes={AGENT_CODES} />
        <button class="primary" type="submit" disabled={busy}>
          {current ? 'Change the watch' : 'Watch issues'}
        </button>
      </form>
    </details>
  );
}
