/**
 * An example server for the 2026-07-28 `io.modelcontextprotocol/tasks` extension (SEP-2663), on the
 * raw scripted core from `spec/support/ext-server` (no SDK on the server side). Run it over stdio:
 *
 *     npx tsx examples/ext-server.ts            # EXT_STEP_MS=200 for faster steps
 *
 * It answers `server/discover` (protocol 2026-07-28, the tasks extension advertised) and serves:
 * - `analyze` `{ id?: number }` — a task that reports its steps in `statusMessage`, asks one question
 *   through `inputRequests` (an elicitation: how detailed the report should be), then completes
 *   with a report reflecting the answer. Answer it with `tasks/update`.
 * - `echo` `{ text }` — answers at once (never a task).
 * A client that does not declare the extension gets `analyze`'s report at once, as SEP-2663 asks.
 * Subscribed clients (`subscriptions/listen`) receive `notifications/tasks` on every change.
 */
import { pathToFileURL } from 'node:url';
import { ExtServer, type ExtServerOptions } from '../spec/support/ext-server/server.js';
import { serveStdio } from '../spec/support/ext-server/serve-stdio.js';
import { immediateTool, taskTool } from '../spec/support/ext-server/tools.js';
import { elicitation, textResult, type Json } from '../spec/support/ext-server/wire.js';

/** Knobs for tests. */
export interface AnalyzeServerOptions extends ExtServerOptions {
  /** Time between two steps of `analyze`, in ms of the server clock. @default 500 */
  readonly stepMs?: number;
}

/** The depth the user picked, or `summary` when they declined. */
function depthOf(answers: Readonly<Record<string, Json>>): string {
  const answer = answers.depth;
  const depth = (answer?.content as Json | undefined)?.depth;
  return answer?.action === 'accept' && typeof depth === 'string' ? depth : 'summary';
}

/** Builds the example server (call `tick()` regularly, or serve it with `serveStdio(..., { tickMs })`). */
export function createAnalyzeServer(options: AnalyzeServerOptions = {}): ExtServer {
  const stepMs = options.stepMs ?? 500;
  const analyze = taskTool(
    'analyze',
    (args) => {
      const id = typeof args.id === 'number' ? args.id : 1;
      return {
        statusMessage: `queued analysis of dataset ${id}`,
        pollIntervalMs: Math.max(50, Math.round(stepMs / 2)),
        advance: { everyMs: stepMs },
        steps: [
          { statusMessage: `loading dataset ${id}` },
          { statusMessage: 'computing statistics' },
          {
            statusMessage: 'waiting for your choice of report depth',
            inputRequests: {
              depth: elicitation('How detailed should the report be?', { depth: { type: 'string', enum: ['summary', 'full'] } }),
            },
          },
          { statusMessage: 'writing the report' },
          {
            result: ({ answers }) =>
              textResult(`analysis of dataset ${id}: ${depthOf(answers)} report ready`, { structuredContent: { id, depth: depthOf(answers) } }),
            statusMessage: 'done',
          },
        ],
      };
    },
    { description: 'Analyses a dataset as a task; asks how detailed the report should be.', inputSchema: { type: 'object', properties: { id: { type: 'number' } } } },
  );
  const echo = immediateTool('echo', (args) => textResult(typeof args.text === 'string' ? args.text : ''), 'Echoes its text at once.');
  return new ExtServer({ serverInfo: { name: 'ext-example-server', version: '1.0.0' }, ...options, tools: [analyze, echo, ...(options.tools ?? [])] });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stepMs = Number(process.env.EXT_STEP_MS ?? 500);
  serveStdio(createAnalyzeServer({ stepMs }), { tickMs: Math.max(10, Math.round(stepMs / 5)) });
}
