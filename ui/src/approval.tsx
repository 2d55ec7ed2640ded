// What an agent waits for the person to decide (DESIGN §15): one card per pending approval, with
// the tool's whole input and the answers. A card leaves when its `approval.decided` arrives, from
// whichever client answered.
import { useState } from 'preact/hooks';
import { useAction } from './hooks.ts';
import type { Approval, ApprovalDecision } from '../../schemas/approval.ts';
import type { Session } from '../../schemas/session.ts';
import { networkTarget } from '../../schemas/denials.ts';
import { api, messageOf } from './api.ts';

type Input = Record<string, unknown>;
const text = (v: unknown): v is string => typeof v === 'string';

// The pending approvals of a task's sessions, oldest first.
export function Approvals({ approvals, sessions }: { approvals: Approval[]; sessions: Session[] }) {
  if (approvals.length === 0) return null;
  const sorted = [...approvals].sort((a, b) => a.created_at.localeCompare(b.created_at));
  return (
    <>
      {sorted.map((a) => (
        <ApprovalCard key={a.id} approval={a} agent={sessions.find((s) => s.id === a.session_id)?.agent ?? 'The agent'} />
      ))}
    </>
  );
}

function ApprovalCard({ approval: a, agent }: { approval: Approval; agent: string }) {
  const question = a.kind === 'question';
  const network = a.kind === 'network';
  const [message, setMessage] = useState('');
  const [answer, setAnswer] = useState('');
  const { busy, error, run } = useAction();
  // The nonce the card was shown with: a decision on something else (asked again meanwhile) is
  // refused by the API rather than applied to what the person did not see.
  const decide = (body: Omit<ApprovalDecision, 'nonce'>) => run(() => api<Approval>('POST', `/api/approvals/${a.id}`, { ...body, nonce: a.nonce }));
  const deny = () => decide({ decision: 'deny', ...(message.trim() ? { message: message.trim() } : {}) });
  const id = `approval-${a.id}`;
  // A connection the sandbox holds (DESIGN §18): where it goes is the question.
  const title = question ? `${agent} asks you` : network ? `${agent} asks to connect to ${networkTarget(a.input) ?? 'a host'}` : `${agent} asks to use ${a.tool}`;
  return (
    <section class="approval" aria-labelledby={`${id}-title`} data-approval={a.id}>
      <h2 id={`${id}-title`}>
        {title} <span class="badge approval">needs you</span>
      </h2>
      <InputView approval={a} choose={question ? { busy, pick: (label) => decide({ decision: 'allow', answer: label }) } : undefined} />
      {question ? (
        <div class="field">
          <label for={`${id}-answer`}>Your answer</label>
          <textarea id={`${id}-answer`} rows={2} value={answer} onInput={(e) => setAnswer((e.currentTarget as HTMLTextAreaElement).value)} />
        </div>
      ) : null}
      <div class="field">
        <label for={`${id}-message`}>Message to the agent if denied (optional)</label>
        <input id={`${id}-message`} value={message} onInput={(e) => setMessage((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <div class="actions" role="group" aria-label={`Answer: ${title}`}>
        {question ? (
          <button type="button" class="primary" disabled={busy || !answer.trim()} onClick={() => decide({ decision: 'allow', answer: answer.trim() })}>
            Answer
          </button>
        ) : (
          <>
            <button type="button" class="primary" disabled={busy} onClick={() => decide({ decision: 'allow' })}>
              Allow
            </button>
            <button type="button" disabled={busy} onClick={() => decide({ decision: 'allow', remember: 'session' })}>
              Allow for this session
            </button>
            {network ? (
              <button type="button" disabled={busy} onClick={() => decide({ decision: 'allow', remember: 'project' })}>
                Allow for this project
              </button>
            ) : null}
          </>
        )}
        <button type="button" class="danger" disabled={busy} onClick={deny}>
          Deny
        </button>
      </div>
      {error !== undefined ? (
        <p class="form-error" role="alert">
          {messageOf(error)}
        </p>
      ) : null}
    </section>
  );
}

// How a question's option is answered from its card: with its label, at once.
interface Choose {
  busy: boolean;
  pick: (label: string) => void;
}

// An option's label: AskUserQuestion's `label`, ACP's `name` (a permission option) or `title`
// (an elicitation's titled choice), or the option itself when it is a string; null if none.
export function optionLabel(o: unknown): string | null {
  if (text(o)) return o;
  if (o === null || typeof o !== 'object') return null;
  const r = o as Input;
  for (const k of ['label', 'name', 'title']) if (text(r[k]) && r[k] !== '') return r[k] as string;
  return null;
}

// An ACP elicitation's choices: its form's one field, a string `enum` or a `oneOf` of `const`s (the
// value the answer fills in); null for any other form, which stays shown as JSON.
export function schemaChoices(schema: unknown): string[] | null {
  if (schema === null || typeof schema !== 'object') return null;
  const props = (schema as Input).properties;
  if (props === null || typeof props !== 'object') return null;
  const fields = Object.values(props as Input);
  if (fields.length !== 1 || fields[0] === null || typeof fields[0] !== 'object') return null;
  const field = fields[0] as Input;
  if (Array.isArray(field.enum) && field.enum.length > 0 && field.enum.every(text)) return field.enum as string[];
  const consts = Array.isArray(field.oneOf) ? field.oneOf.map((o) => (o !== null && typeof o === 'object' ? (o as Input).const : undefined)) : [];
  return consts.length > 0 && consts.every(text) ? (consts as string[]) : null;
}

// The tool's whole input: what it does first (the command, the file and its new text or the edit,
// the URL, the question with its header and options), then any other field as JSON, so nothing asked is hidden.
// A question's options are buttons that answer with their label when `choose` is given.
function InputView({ approval: a, choose }: { approval: Approval; choose?: Choose | undefined }) {
  const input: Input = a.input !== null && typeof a.input === 'object' && !Array.isArray(a.input) ? (a.input as Input) : { input: a.input };
  const shown = new Set<string>();
  const take = (k: string): unknown => (shown.add(k), input[k]);
  const parts = [];
  const target = a.kind === 'network' ? networkTarget(input) : null;
  if (target !== null) parts.push(<p class="mono input-target" key="target">{(take('host'), take('port'), target)}</p>);
  if (text(input.command)) parts.push(<pre class="input" key="command"><code>{take('command') as string}</code></pre>);
  for (const k of ['file_path', 'notebook_path', 'path', 'url'])
    if (text(input[k])) parts.push(<p class="mono input-target" key={k}>{take(k) as string}</p>);
  if (text(input.content)) parts.push(<pre class="input" key="content"><code>{take('content') as string}</code></pre>);
  // Claude Code's ExitPlanMode (asked in `read`): the plan it wants to carry out.
  if (text(input.plan)) parts.push(<pre class="input" key="plan"><code>{take('plan') as string}</code></pre>);
  if (text(input.old_string) || text(input.new_string)) parts.push(<EditView key="edit" edits={[{ old_string: take('old_string'), new_string: take('new_string') }]} />);
  if (Array.isArray(input.edits)) parts.push(<EditView key="edits" edits={take('edits') as Input[]} />);
  // A Codex question (grove's Codex bridge asks each on its own): its header above it.
  if (a.kind === 'question' && text(input.header)) parts.push(<p class="muted small" key="header">{take('header') as string}</p>);
  if (text(input.question)) parts.push(<p class="question" key="question">{take('question') as string}</p>);
  // An ACP elicitation words its question as `message`.
  if (a.kind === 'question' && text(input.message)) parts.push(<p class="question" key="message">{take('message') as string}</p>);
  if (Array.isArray(input.questions)) parts.push(<Questions key="questions" questions={take('questions') as Input[]} choose={choose} />);
  if (a.kind === 'question' && Array.isArray(input.options)) parts.push(<Options key="options" options={take('options') as unknown[]} choose={choose} />);
  const choices = schemaChoices(input.requestedSchema);
  if (choices) parts.push(<Options key="choices" options={(take('requestedSchema'), choices)} choose={choose} />);
  const rest = Object.fromEntries(Object.entries(input).filter(([k]) => !shown.has(k)));
  if (Object.keys(rest).length > 0) parts.push(<pre class="input" key="rest"><code>{JSON.stringify(rest, null, 2)}</code></pre>);
  return <div class="approval-input">{parts}</div>;
}

// An edit as the lines it removes and the lines it adds.
function EditView({ edits }: { edits: Input[] }) {
  const lines = (v: unknown, sign: string) => (text(v) ? v.split('\n').map((l) => `${sign} ${l}`) : []);
  return (
    <pre class="input edit">
      {edits.map((e, i) => (
        <code key={i}>
          {[...lines(e.old_string, '-'), ...lines(e.new_string, '+')].join('\n')}
          {i < edits.length - 1 ? '\n…\n' : ''}
        </code>
      ))}
    </pre>
  );
}

// Claude Code's AskUserQuestion: each question with its header, the options it offers (with what
// each means) and whether several may be chosen.
function Questions({ questions, choose }: { questions: Input[]; choose?: Choose | undefined }) {
  return (
    <ul class="questions">
      {questions.map((q, i) => (
        <li key={i}>
          {text(q.header) ? <p class="muted small">{q.header}</p> : null}
          <p class="question">{text(q.question) ? q.question : JSON.stringify(q)}</p>
          {Array.isArray(q.options) ? <Options options={q.options} choose={choose} /> : null}
          {q.multiSelect === true ? <p class="muted small">Several may be chosen.</p> : null}
        </li>
      ))}
    </ul>
  );
}

// A question's options, each with what it means: buttons answering with the option's label on a
// question's card, plain items elsewhere. One that has no label is shown as JSON.
function Options({ options, choose }: { options: unknown[]; choose?: Choose | undefined }) {
  return (
    <ul class={choose ? 'options choices' : 'options'}>
      {options.map((o, j) => {
        const label = optionLabel(o);
        const description = o !== null && typeof o === 'object' && text((o as Input).description) ? ((o as Input).description as string) : null;
        return (
          <li key={j}>
            {label === null ? (
              JSON.stringify(o)
            ) : choose ? (
              <button type="button" disabled={choose.busy} onClick={() => choose.pick(label)}>
                {label}
              </button>
            ) : (
              label
            )}
            {description !== null ? <span class="muted"> — {description}</span> : null}
          </li>
        );
      })}
    </ul>
  );
}
