import type { ErrorCode } from '../daemon/errors.ts';

// What every worker task returns: data, because thrown errors lose their fields crossing threads.
export type Ok<T> = { ok: true } & T;
export type Fail = { ok: false; code: ErrorCode; message: string; path?: string; files?: string[] };
export type Result<T> = Ok<T> | Fail;

export function fail(code: ErrorCode, message: string, path?: string): Fail {
  return path === undefined ? { ok: false, code, message } : { ok: false, code, message, path };
}

// A CONFLICT and the files it is about.
export function conflict(message: string, files: string[]): Fail {
  return { ok: false, code: 'CONFLICT', message, files };
}
