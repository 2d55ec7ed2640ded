import { EVENT_PAGE_DEFAULT, EventPage, EventQuery, MAX_EVENT_SEQ } from '../../schemas/event.ts';
import type { EventFeed } from '../events/feed.ts';
import { route, type Route } from '../http/route.ts';
import { resumeFrom, wantsEventStream, writeSse } from '../http/sse.ts';

// GET /api/events: one stream of everything (DESIGN §11), as pages or as SSE.
export function eventRoutes(deps: { feed: EventFeed }): Route[] {
  const { feed } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/events',
      summary: 'Every change (projects, tasks, sessions) in order: a JSON page, or with Accept: text/event-stream a stream that resumes after Last-Event-ID',
      query: EventQuery,
      responses: { 200: EventPage },
      handler: async ({ query, req, res }) => {
        const filter = { project_id: query.project_id, task_id: query.task_id };
        if (wantsEventStream(req)) {
          const from = resumeFrom(req, query.after, MAX_EVENT_SEQ);
          await writeSse(res, (signal) => feed.follow(filter, from, signal), { stall: feed.stall(from) });
          return null;
        }
        return { status: 200, body: await feed.page(filter, query.after ?? 0, query.limit ?? EVENT_PAGE_DEFAULT) };
      },
    }),
  ];
}
