// The CLI's exit statuses: scripts can tell an API refusal from a usage error or a stopped daemon.
export const EXIT = { OK: 0, API: 1, USAGE: 2, NO_DAEMON: 3 } as const;

// A failure the CLI reports and exits on, with the status it exits with; `problem` is what --json
// prints for a refusal the CLI makes itself (an unknown name), as the API's refusals print theirs.
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly problem?: { code: string; detail: string; status: number },
  ) {
    super(message);
  }
}
