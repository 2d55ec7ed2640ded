// Form pieces: a field with the API's own message for it (from the problem's `errors`, or by
// the problem's code), and the form's general error.
import type { ComponentChildren } from 'preact';
import { ApiError, messageOf } from './api.ts';
import { useAction } from './hooks.ts';

// The message for `name` in `err`: a validation issue at that field, or a code that belongs to it.
export function fieldError(err: unknown, name: string, codes: string[] = []): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  return err.at(name) ?? (codes.includes(err.code) ? err.problem.detail : undefined);
}

// `id` tells apart fields of one name on one page (each conversation's follow-up box).
export function Field(props: { label: string; name: string; id?: string; error: string | undefined; hint?: string; children: ComponentChildren }) {
  const id = props.id ?? `f-${props.name}`;
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={id}>{props.label}</label>
      {props.children}
      {props.error ? (
        <p class="field-error" id={`${id}-error`} role="alert">
          {props.error}
        </p>
      ) : props.hint ? (
        <p class="hint">{props.hint}</p>
      ) : null}
    </div>
  );
}

// Attributes for the input inside a Field: its id, and its error for assistive technology.
export function inputProps(name: string, error: string | undefined, id = `f-${name}`) {
  return { id, name, 'aria-invalid': error ? true : undefined, 'aria-describedby': error ? `${id}-error` : undefined };
}

// An error no field claims.
export function FormError(props: { error: unknown; fields: string[]; codes?: string[] }) {
  const { error } = props;
  if (error === undefined) return null;
  if (error instanceof ApiError && (props.fields.some((f) => error.at(f)) || (props.codes ?? []).includes(error.code))) return null;
  return (
    <p class="form-error" role="alert">
      {messageOf(error)}
    </p>
  );
}

// A form's submit: `send` gets its fields; while it runs the form is busy, a throw is its error,
// and a success clears the error and the text typed. Choices (agent, mode) stay as they were:
// the next session most often wants the same, and a reset would fall back to the first option.
export function useSubmit(send: (fields: FormData) => Promise<void>) {
  const { error, busy, run } = useAction();
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const sent = await run(async () => (await send(new FormData(form)), true));
    if (sent) for (const field of form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('textarea, input')) field.value = '';
  };
  return { error, busy, onSubmit };
}

// An action's refusal (a button, not a form): the API's message, with the files it names (a
// conflict's).
export function ActionError({ error }: { error: unknown }) {
  if (error === undefined) return null;
  return (
    <p class="form-error" role="alert">
      {messageOf(error)}
      {error instanceof ApiError && error.problem.files ? ` — ${error.problem.files.join(', ')}` : ''}
    </p>
  );
}
