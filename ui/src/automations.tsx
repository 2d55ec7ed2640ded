// A project's automations on its board (DESIGN §19): each with its schedule in words, its next
// time, its last runs and their outcome, Run now and Pause/Resume; and a form to add one. All of it
// follows the event stream: a run's changes show as they happen.
import { useRef, useState } from 'preact/hooks';
import type { Automation, AutomationRun, CreateAutomation } from '../../schemas/automation.ts';
import type { Mode } from '../../schemas/config.ts';
import { AGENT_CODES, AgentChoice, useAgents } from './agents.tsx';
import { api, messageOf } from './api.ts';
import { ActionError, Field, FormError, fieldError, inputProps, useSubmit } from './form.tsx';
import { useAction, useLoad } from './hooks.ts';
import type { Live } from './live.ts';
import { cronWords, scheduleWords } from './schedule-words.ts';

// How many of its newest runs an automation shows; the API keeps the last 100.
const RUNS_SHOWN = 5;

export function AutomationsPanel({ live, projectId }: { live: Live; projectId: string }) {
  const list = live.state.automations.get(projectId) ?? [];
  return (
    <section class="panel automations" aria-label="Automations">
      <h2>
        Automations <span class="count">{list.length}</span>
      </h2>
      {list.length === 0 ? <p class="muted small">None yet: agent work started on a schedule, each run in a task of its own.</p> : null}
      <ul>
        {list.map((a) => (
          <AutomationItem key={a.id} automation={a} runsSeq={live.state.runsSeq.get(a.id) ?? 0} />
        ))}
      </ul>
      <NewAutomation projectId={projectId} />
    </section>
  );
}

// One automation: what it runs and when, its actions, its last runs.
function AutomationItem({ automation: a, runsSeq }: { automation: Automation; runsSeq: number }) {
  const { busy, error, run } = useAction();
  // Both are shown from their events (automation.run, automation.updated), as every page sees them.
  const runNow = () => run(() => api<AutomationRun>('POST', `/api/automations/${a.id}/runs`));
  const toggle = () => run(() => api<Automation>('PATCH', `/api/automations/${a.id}`, { enabled: !a.enabled }));
  return (
    <li data-automation={a.name} data-enabled={String(a.enabled)}>
      <div class="automation-head">
        <strong>{a.name}</strong>
        <span class="schedule">{scheduleWords(a.schedule)}</span>
        {a.enabled ? null : <span class="badge paused">paused</span>}
        {a.next_run_at ? (
          <span class="next muted small">
            next <time dateTime={a.next_run_at}>{new Date(a.next_run_at).toLocaleString()}</time>
          </span>
        ) : a.enabled ? (
          <span class="next muted small">no time left</span>
        ) : null}
        <button type="button" class="small" onClick={runNow} disabled={busy}>
          Run now
        </button>
        <button type="button" class="small" onClick={toggle} disabled={busy}>
          {a.enabled ? 'Pause' : 'Resume'}
        </button>
      </div>
      <p class="muted small automation-prompt" title={a.session.prompt}>
        {a.session.agent ? `${a.session.agent}: ` : ''}
        {a.session.prompt}
      </p>
      <ActionError error={error} />
      <Runs automationId={a.id} seq={runsSeq} />
    </li>
  );
}

// The newest runs, read again at each automation.run event of the automation (`seq`).
function Runs({ automationId, seq }: { automationId: string; seq: number }) {
  const { value, error } = useLoad(() => api<AutomationRun[]>('GET', `/api/automations/${automationId}/runs`), [automationId, seq]);
  if (error !== undefined) return <p class="form-error">{messageOf(error)}</p>;
  if (value === undefined) return null;
  if (value.length === 0) return <p class="muted small">No run yet.</p>;
  return (
    <ol class="runs" aria-label="Last runs">
      {value.slice(0, RUNS_SHOWN).map((r) => (
        <li key={r.id} data-run={r.id} data-status={r.status}>
          <time dateTime={r.scheduled_for}>{new Date(r.scheduled_for).toLocaleString()}</time> <span class={`status run-${r.status}`}>{r.status}</span>{' '}
          <span class="small">
            {r.trigger === 'manual' ? 'run now' : 'scheduled'}
            {outcomeOf(r)}
          </span>{' '}
          {r.task_id ? (
            <a class="small" href={`#/tasks/${r.task_id}`}>
              its task
            </a>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

const SKIPPED: Record<string, string> = { overlap: 'the previous run was still going', disabled: 'paused before its turn' };
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

// What a run came to, after its trigger: why it was skipped or failed, or what it changed.
function outcomeOf(r: AutomationRun): string {
  const folded = r.missed > 0 && r.status !== 'skipped' ? `, ${plural(r.missed, 'missed time')} folded in` : '';
  if (r.status === 'skipped') {
    if (r.reason === 'precheck') return `: the precheck exited ${r.precheck?.exit_code ?? 'without a code'}`;
    if (r.reason === 'missed') return `: ${plural(r.missed, 'missed time')}`;
    return r.reason ? `: ${SKIPPED[r.reason]}` : '';
  }
  if (r.status === 'failed') return `${folded}: ${r.error ?? 'failed'}`;
  const c = r.changes;
  if (r.status !== 'succeeded' || c === null) return folded;
  if (c.files === 0 && c.commits === 0) return `${folded}: no changes (archived)`;
  return `${folded}: ${plural(c.files, 'file')}, +${c.additions} −${c.deletions}${c.commits ? `, ${plural(c.commits, 'commit')}` : ''}`;
}

// A new automation of the project: a cron (with its zone) or one time, the session it starts, a
// precheck, and where its work goes. The API's messages show at their fields.
function NewAutomation({ projectId }: { projectId: string }) {
  const agents = useAgents();
  const box = useRef<HTMLDetailsElement>(null);
  const [once, setOnce] = useState(false);
  // Kept to read it back in words as it is typed.
  const [cron, setCron] = useState('');
  const { error, busy, onSubmit } = useSubmit(async (f) => {
    const text = (k: string) => String(f.get(k) ?? '');
    const body: CreateAutomation = {
      project_id: projectId,
      name: text('name'),
      schedule: once ? { at: isoOf(text('at')) } : { cron, ...(text('timezone') ? { timezone: text('timezone') } : {}) },
      session: { prompt: text('prompt'), mode: text('mode') as Mode },
      land: text('land') as CreateAutomation['land'],
    };
    // No agent to choose (none installed): the project's default, or the API's reason at the field.
    if (text('agent')) body.session.agent = text('agent');
    if (text('precheck')) body.precheck = text('precheck');
    await api<Automation>('POST', '/api/automations', body);
    setCron('');
    box.current!.open = false;
  });
  const nameError = fieldError(error, 'name', ['AUTOMATION_EXISTS']);
  const atError = fieldError(error, 'schedule/at');
  const cronError = fieldError(error, 'schedule/cron');
  const zoneError = fieldError(error, 'schedule/timezone');
  const promptError = fieldError(error, 'session/prompt');
  const precheckError = fieldError(error, 'precheck');
  const landError = fieldError(error, 'land');
  const said = cronWords(cron);
  return (
    <details class="new-automation" ref={box}>
      <summary>Add an automation</summary>
      <form class="form" onSubmit={onSubmit} aria-label="New automation">
        <Field label="Name" name="name" error={nameError}>
          <input {...inputProps('name', nameError)} required />
        </Field>
        <Field label="Runs" name="repeat" error={undefined}>
          <select {...inputProps('repeat', undefined)} value={once ? 'once' : 'cron'} onChange={(e) => setOnce(e.currentTarget.value === 'once')}>
            <option value="cron">on a cron schedule</option>
            <option value="once">once</option>
          </select>
        </Field>
        {once ? (
          <Field label="At" name="at" error={atError} hint="In this browser's time zone.">
            <input {...inputProps('at', atError)} type="datetime-local" required />
          </Field>
        ) : (
          <>
            <Field label="Cron" name="cron" error={cronError} hint={cron.trim() && said !== cron.trim() ? `Reads: ${said}` : '5 fields (minute hour day month weekday), or 6 with seconds first: 0 9 * * 1-5 is weekdays at 09:00.'}>
              <input {...inputProps('cron', cronError)} class="mono" required value={cron} onInput={(e) => setCron(e.currentTarget.value)} />
            </Field>
            <Field label="Time zone" name="timezone" error={zoneError} hint="An IANA zone such as Europe/Paris; empty: the daemon's machine's.">
              <input {...inputProps('timezone', zoneError)} />
            </Field>
          </>
        )}
        <Field label="Prompt" name="prompt" error={promptError} hint="{date}, {run_id} and {precheck_output} are filled in at each run.">
          <textarea {...inputProps('prompt', promptError)} rows={3} required />
        </Field>
        <AgentChoice agents={agents} error={error} at="session/" />
        <Field label="Precheck" name="precheck" error={precheckError} hint="Optional: a shell command run first in the project's checkout; a non-zero exit skips the run.">
          <input {...inputProps('precheck', precheckError)} class="mono" />
        </Field>
        <Field label="Its work" name="land" error={landError}>
          <select {...inputProps('land', landError)}>
            <option value="none">waits for review</option>
            <option value="queue">goes to the merge queue</option>
          </select>
        </Field>
        <FormError error={error} fields={['name', 'schedule/cron', 'schedule/timezone', 'schedule/at', 'session/prompt', 'session/agent', 'session/mode', 'precheck', 'land']} codes={['AUTOMATION_EXISTS', ...AGENT_CODES]} />
        <button class="primary" type="submit" disabled={busy}>
          Add automation
        </button>
      </form>
    </details>
  );
}

// A datetime-local field's value (this browser's time) as an ISO time with its offset; anything
// else as typed, for the API to say why.
function isoOf(local: string): string {
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? local : t.toISOString();
}
