import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { TSchema, Static } from '@sinclair/typebox';
import type { ValidationIssue } from '../../schemas/common.ts';

export interface Validator<T> {
  (value: unknown): value is T;
  issues(): ValidationIssue[];
}

// One Ajv per purpose, made once at start: bodies are never coerced, query strings are.
export function createAjv(opts: { coerce?: boolean } = {}): Ajv {
  return new Ajv({
    allErrors: true,
    strict: true,
    coerceTypes: opts.coerce ?? false,
    useDefaults: false,
    removeAdditional: false,
    unicodeRegExp: true,
    allowUnionTypes: true,
    // TypeBox adds `description`s and symbols only; ids are ours to register later.
    addUsedSchema: false,
  });
}

// A validator of a TypeBox schema; the static type comes from the same schema. Ajv compiles it
// at its first use, not at the daemon's start: the API has many schemas and a run uses few.
export function compile<S extends TSchema>(ajv: Ajv, schema: S): Validator<Static<S>> {
  let compiled: ValidateFunction | null = null;
  const fn = (): ValidateFunction => (compiled ??= ajv.compile(schema));
  let nonFinite: ValidationIssue[] = [];
  const validator = ((value: unknown) => {
    nonFinite = [];
    if (!fn()(value)) return false;
    // Ajv's coercion turns the query value "Infinity" (or "1e400") into Infinity after its
    // type check, and applies minimum/maximum to finite numbers only: such a value passes
    // every keyword and would reach the store. No field of ours can be infinite.
    nonFinite = findNonFinite(value, '');
    return nonFinite.length === 0;
  }) as Validator<Static<S>>;
  validator.issues = () => (nonFinite.length > 0 ? nonFinite : toIssues(fn().errors ?? []));
  return validator;
}

function findNonFinite(value: unknown, at: string): ValidationIssue[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [{ path: at === '' ? '/' : at, message: 'must be a finite number' }];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => findNonFinite(v, `${at}/${escapePointer(k)}`));
}

// Ajv errors as {path, message} with a JSON pointer that names the offending field itself.
export function toIssues(errors: ErrorObject[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      path += '/' + escapePointer(String(e.params.additionalProperty));
      message = 'is not an allowed field';
    } else if (e.keyword === 'required') {
      path += '/' + escapePointer(String(e.params.missingProperty));
      message = 'is required';
    } else if (e.keyword === 'pattern') {
      message = 'has a value or characters that are not allowed';
    } else if (e.keyword === 'propertyNames') {
      continue; // reported again, with the name, by the `pattern` error under it
    }
    const key = `${path}\0${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: path === '' ? '/' : path, message });
  }
  return out;
}

function escapePointer(s: string): string {
  return s.replaceAll('~', '~0').replaceAll('/', '~1');
}
