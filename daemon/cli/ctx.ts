// What a command is given, and the small helpers every command uses.
import type { Host } from '../../schemas/host.ts';
import type { Client } from '../client/calls.ts';
import type { Endpoint } from './connect.ts';
import { usage } from './usage.ts';

// What the CLI knows of the store's hosts (DESIGN §14.2): whether it is shared (lists then carry
// every host's rows, shown with a HOST column), which host this daemon is, and each host's name.
export interface TeamView {
  shared: boolean;
  me: string;
  hosts: Host[];
  nameOf: (hostId: string) => string;
}

export interface Ctx {
  api: Client;
  /** a fresh client (the first one may have idled for long) */
  connect: () => Client;
  /** where the client goes: this machine's daemon socket, or a host's forwarded one */
  endpoint: Endpoint;
  /** the store's hosts as this daemon sees them, asked once per command */
  team: () => Promise<TeamView>;
  json: boolean;
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  rest: string[];
  out: (s: string) => void;
}

export type Command = (c: Ctx) => Promise<void>;

export function arg(c: Pick<Ctx, 'positionals'>, i: number, name: string): string {
  const v = c.positionals[i];
  if (v === undefined) usage(`missing <${name}>`);
  return v;
}

export function print(c: Pick<Ctx, 'json' | 'out'>, data: unknown, human: () => string): void {
  c.out(c.json ? JSON.stringify(data, null, 2) : human());
}

// An option's value where it was given as a string.
export const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

// An option's value in seconds (--timeout, --grace), where it was given; anything but a positive number is a usage error.
export function seconds(c: Pick<Ctx, 'values'>, option: string): number | undefined {
  const v = c.values[option];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !(n > 0)) usage(`--${option} must be a number of seconds, got ${JSON.stringify(v)}`);
  return n;
}

// An option's value where it is one of `choices` (the schema's literals); any other is a usage error.
export function oneOf<T extends string>(c: Pick<Ctx, 'values'>, option: string, choices: readonly T[]): T | undefined {
  const v = c.values[option];
  if (v === undefined) return undefined;
  if (!choices.includes(v as T)) usage(`--${option} is one of ${choices.join(', ')}`);
  return v as T;
}

// On stderr: progress and notes, never mixed with what scripts read.
export const err = (s: string) => void process.stderr.write(s + '\n');
