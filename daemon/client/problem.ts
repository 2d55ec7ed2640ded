import { retryAfterMs } from '../runtime/retry.ts';

// An API refusal (DESIGN §4: application/problem+json with a stable code), as every client of the
// daemon sees it: the CLI (exit 1), `grove mcp` (a tool error), the bridges, tests and bench.
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    /** the body as parsed JSON, or its text where it was not JSON */
    readonly body: Record<string, unknown> | string,
    /** how long the daemon asked to wait before trying again (its Retry-After), if it did */
    readonly retryAfterMs?: number,
  ) {
    super(`${code}: ${detail}`);
  }

  /** the problem document the API answered; null where the body was not one */
  get json(): Record<string, unknown> | null {
    return typeof this.body === 'string' ? null : this.body;
  }
}

// A refusal from its status, body and Retry-After header. A body that is not a problem document (a
// proxy's page, a truncated answer) keeps its text as the detail, and the status stands for the code.
export function parseProblem(status: number, text: string, retryAfter?: string): ApiProblem {
  const after = retryAfterMs(retryAfter);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return new ApiProblem(status, String(status), text, text, after);
  const doc = json as Record<string, unknown>;
  const code = typeof doc.code === 'string' ? doc.code : String(status);
  const detail = typeof doc.detail === 'string' ? doc.detail : text;
  return new ApiProblem(status, code, detail, doc, after);
}
