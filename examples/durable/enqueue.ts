/**
 * Enqueues tool calls as durable jobs, and with `--wait` waits for them.
 *
 *     npx tsx examples/durable/enqueue.ts --redis redis://127.0.0.1:6379 --tool analyze id=7 [--count N] [--wait]
 *
 * `key=value` pairs are the tool's arguments (a value that parses as JSON is taken as JSON:
 * `steps=3` is a number). Without `--wait` it prints `{"jobId"}` per job enqueued; with `--wait`
 * one line per finished job, `{"jobId","state":"completed","result"}` or
 * `{"jobId","state":"failed","error"}`, and exits 0 when all completed (1 otherwise).
 *
 * More options: `--queue NAME` (default `mcp-tools`), `--server KEY` (default `default`),
 * `--timeout MS` (each job's deadline, from now).
 */
import { parseArgs } from 'node:util';
import { Queue, QueueEvents } from 'bullmq';
import { enqueueToolTask } from '../../lib/bullmq/index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    redis: { type: 'string' },
    tool: { type: 'string' },
    count: { type: 'string', default: '1' },
    wait: { type: 'boolean', default: false },
    queue: { type: 'string', default: 'mcp-tools' },
    server: { type: 'string', default: 'default' },
    timeout: { type: 'string' },
  },
});
if (values.redis === undefined || values.tool === undefined) {
  console.error('usage: enqueue.ts --redis <redis URL> --tool <name> [key=value ...] [--count N] [--wait]');
  process.exit(2);
}
const args: Record<string, unknown> = {};
for (const pair of positionals) {
  const at = pair.indexOf('=');
  if (at <= 0) {
    console.error(`arguments are key=value pairs, got "${pair}"`);
    process.exit(2);
  }
  const raw = pair.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // a plain string
  }
  Object.defineProperty(args, pair.slice(0, at), { value, enumerable: true, writable: true, configurable: true });
}

const connection = { url: values.redis, maxRetriesPerRequest: null };
const queue = new Queue(values.queue, { connection });
// Listening before enqueueing, so that no job finishes unseen.
const events = values.wait ? new QueueEvents(values.queue, { connection }) : undefined;
await events?.waitUntilReady();
const print = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

const count = Number(values.count);
const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
const jobs = [];
for (let i = 0; i < count; i += 1) {
  const job = await enqueueToolTask(queue, { server: values.server, tool: values.tool, args, timeoutMs });
  jobs.push(job);
  if (events === undefined) print({ jobId: job.id });
}
let failures = 0;
if (events !== undefined) {
  await Promise.all(
    jobs.map((job) =>
      job.waitUntilFinished(events).then(
        (result: unknown) => print({ jobId: job.id, state: 'completed', result }),
        (error: unknown) => {
          failures += 1;
          print({ jobId: job.id, state: 'failed', error: error instanceof Error ? error.message : String(error) });
        },
      ),
    ),
  );
  await events.close();
}
await queue.close();
process.exit(failures === 0 ? 0 : 1);
