/**
 * A durable worker: runs the tool jobs of a BullMQ queue against one MCP server over Streamable
 * HTTP, and prints one JSON line per job event on stdout.
 *
 *     npx tsx examples/durable/worker.ts --redis redis://127.0.0.1:6379 --url http://127.0.0.1:3000/mcp [--concurrency N]
 *
 * Lines: `{"event":"started"|"resumed"|"progress"|"completed"|"failed","jobId","taskId",...}`.
 * `resumed` means this worker took over a job whose task another worker started (that worker
 * died, or handed the job back when it closed): it waits on the same task, the tool is not called
 * again. Questions the task asks show as `progress` lines with `"status":"input_required"` and
 * wait for `answerJobInput` (from any process). SIGTERM or SIGINT hands the running jobs back to
 * the queue and exits.
 *
 * `--stdio "<command>"` instead of `--url` runs the server as a child process of the worker (its
 * words split on spaces). Its tasks die with the worker: a job taken over from a worker that died
 * fails ("the server no longer knows it") instead of calling the tool again.
 *
 * More options: `--queue NAME` (default `mcp-tools`), `--server KEY` (the key jobs name the server
 * by, default `default`), `--lock-duration MS` and `--stalled-interval MS` (BullMQ's, default
 * 30000 each: how soon a dead worker's jobs are taken over), `--max-stalled N` (default 10),
 * `--control-poll MS` (how often answers and cancels are looked for, default 1000).
 */
import { parseArgs } from 'node:util';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport as JoinTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { TaskClient } from '../../lib/index.js';
import { taskProcessor, type ToolJobData, type ToolJobEvent } from '../../lib/bullmq/index.js';

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    url: { type: 'string' },
    stdio: { type: 'string' },
    concurrency: { type: 'string', default: '10' },
    queue: { type: 'string', default: 'mcp-tools' },
    server: { type: 'string', default: 'default' },
    'lock-duration': { type: 'string', default: '30000' },
    'stalled-interval': { type: 'string', default: '30000' },
    'max-stalled': { type: 'string', default: '10' },
    'control-poll': { type: 'string', default: '1000' },
  },
});
if (values.redis === undefined || (values.url === undefined) === (values.stdio === undefined)) {
  console.error(
    'usage: worker.ts --redis <redis URL> (--url <MCP server URL> | --stdio "<command>") [--concurrency N]',
  );
  process.exit(2);
}
const target = values.url === undefined ? `stdio: ${values.stdio}` : new URL(values.url).href;
const connection = { url: values.redis, maxRetriesPerRequest: null };

/** One JSON line on stdout. */
const print = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

/**
 * Connects to the server by key. A new connection negotiates the protocol (SDK v2: the tasks
 * extension where the server offers it, 2025-11-25 otherwise); a resumed task that lives in an
 * HTTP session is read in that session (SDK v1 joins it without a handshake).
 */
async function connect(server: string, { sessionId }: { sessionId: string | undefined }): Promise<TaskClient> {
  // Not retried: a key this worker does not know never works (any other error is retried, `retry`).
  if (server !== values.server) throw new UnrecoverableError(`This worker knows no server "${server}"`);
  // Both capabilities, so that a task's questions reach answerJobInput.
  const capabilities = { elicitation: {}, sampling: {} };
  if (values.stdio !== undefined) {
    const [command, ...args] = values.stdio.split(' ').filter((word) => word !== '');
    return TaskClient.connect(new StdioClientTransport({ command: command ?? '', args, stderr: 'inherit' }), {
      sdk: 'v2',
      capabilities,
    });
  }
  const url = new URL(values.url ?? '');
  if (sessionId !== undefined)
    return TaskClient.connect(new JoinTransport(url, { sessionId }), { sdk: 'v1', capabilities });
  return TaskClient.connect(new StreamableHTTPClientTransport(url), { sdk: 'v2', capabilities });
}

function onEvent(event: ToolJobEvent): void {
  switch (event.type) {
    case 'started':
      return print({
        event: 'started',
        jobId: event.jobId,
        taskId: event.taskId,
        tool: event.tool,
        storeMs: event.storeMs,
        windowMs: event.windowMs,
      });
    case 'resumed':
      return print({
        event: 'resumed',
        jobId: event.jobId,
        taskId: event.taskId,
        tool: event.tool,
        sinceStoredMs: event.sinceStoredMs,
      });
    case 'status':
      return print({
        event: 'progress',
        jobId: event.jobId,
        taskId: event.taskId,
        status: event.status,
        statusMessage: event.statusMessage,
      });
    case 'input': {
      const { id, kind, params } = event.question;
      const message = 'message' in params ? params.message : undefined;
      return print({
        event: 'progress',
        jobId: event.jobId,
        taskId: event.taskId,
        status: 'input_required',
        question: { id, kind, message },
      });
    }
    case 'retry':
      return void console.error(
        `job ${event.jobId}: retry ${event.attempt} in ${event.delayMs} ms after: ${event.error.message}`,
      );
    case 'released':
      return void console.error(`job ${event.jobId}: handed back to the queue`);
    case 'warning':
      return void console.error(`job ${event.jobId}: ${event.error.message}`);
  }
}

const queue = new Queue(values.queue, { connection });
const processor = taskProcessor({ queue, connect, onEvent, controlPollMs: Number(values['control-poll']) });
const worker = new Worker(values.queue, processor, {
  connection,
  concurrency: Number(values.concurrency),
  lockDuration: Number(values['lock-duration']),
  stalledInterval: Number(values['stalled-interval']),
  maxStalledCount: Number(values['max-stalled']),
});
const taskIdOf = (data: unknown): string | undefined =>
  (data as Partial<ToolJobData> | undefined)?.task?.reference.taskId;
worker.on('completed', (job, result) =>
  print({ event: 'completed', jobId: job.id, taskId: taskIdOf(job.data), result }),
);
worker.on('failed', (job, error) =>
  print({ event: 'failed', jobId: job?.id, taskId: taskIdOf(job?.data), error: error.message }),
);
worker.on('error', (error) => console.error(`worker: ${error.message}`));
worker.on('ready', () => console.error(`worker ready on queue ${values.queue}, server "${values.server}" = ${target}`));

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  // worker.close() stops taking jobs; processor.close() hands the running ones back to the queue.
  await Promise.all([worker.close(), processor.close()]);
  await queue.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
