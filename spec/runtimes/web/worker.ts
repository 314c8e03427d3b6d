/**
 * The Worker that spec/runtimes/workerd.spec.ts runs in workerd: `GET /run?server=<url>` runs a
 * task to its result, `GET /run?server=<url>&deadlineMs=<ms>` one whose deadline cancels it; the
 * answer is the run's report (scenario.ts) as JSON, or a 500 with the error.
 */
import { runTask } from './scenario.js';

export default {
  async fetch(request: Request): Promise<Response> {
    const params = new URL(request.url).searchParams;
    const server = params.get('server');
    if (server === null) return new Response('server= is missing', { status: 400 });
    const deadline = params.get('deadlineMs');
    try {
      return Response.json(await runTask(new URL(server), deadline === null ? undefined : Number(deadline)));
    } catch (error) {
      return new Response(
        error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error),
        { status: 500 },
      );
    }
  },
};
