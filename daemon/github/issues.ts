// What grove says on an issue or a pull request (DESIGN §20): comments and labels. Every comment
// carries a marker, so that grove never reads its own words back as feedback.
import type { GitHub } from './client.ts';

export const MARKER = '<!-- grove -->';
export const LABEL_WORKING = 'grove:working';
export const LABEL_FAILED = 'grove:failed';

export const isGroves = (body: string | null | undefined) => typeof body === 'string' && body.includes(MARKER);

const split = (repository: string) => {
  const [owner, repo] = repository.split('/') as [string, string];
  return { owner, repo };
};

export function issueWriter(github: Pick<GitHub, 'send'>) {
  return {
    async comment(repository: string, number: number, body: string): Promise<void> {
      await github.send('POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments', { ...split(repository), issue_number: number, body: `${body}\n\n${MARKER}` });
    },
    // Labels added and removed; one already there or already gone is no failure.
    async labels(repository: string, number: number, change: { add?: string[]; remove?: string[] }): Promise<void> {
      if (change.add?.length) await github.send('POST', '/repos/{owner}/{repo}/issues/{issue_number}/labels', { ...split(repository), issue_number: number, labels: change.add });
      for (const name of change.remove ?? []) {
        try {
          await github.send('DELETE', '/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', { ...split(repository), issue_number: number, name });
        } catch (err) {
          if ((err as { kind?: string }).kind !== 'not_found') throw err;
        }
      }
    },
  };
}

export type IssueWriter = ReturnType<typeof issueWriter>;
