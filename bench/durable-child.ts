/**
 * A child process of the durable benchmark (bench/durable.ts), run with `node --import tsx`:
 *
 * - `plain <config>`: one `TaskClient` runs `warmup` tasks, then `n` tasks at once, and prints
 *   `{"phase":"done","cpuMs","wallMs"}` for the measured ones;
 * - `worker <config>`: a BullMQ worker with `taskProcessor` (its defaults; concurrency `n`) prints
 *   `{"phase":"warm"}` once `warmup` jobs completed, then `{"phase":"done","cpuMs","wallMs",
 *   "storeMs":[...],"windowMs":[...]}` once `n` more did. The harness enqueues the jobs.
 *
 * CPU is `process.cpuUsage()` of this process (user + system) over the measured tasks.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as JoinTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Queue, Worker } from 'bullmq';
import { TaskClient } from '../lib/index.js';
import { taskProcessor } from '../lib/bullmq/index.js';

interface Config {
  readonly url: string;
  readonly redis?: string;
  readonly queue?: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly warmup: number;
  readonly n: number;
}

const [mode, json] = process.argv.slice(2);
const config = JSON.parse(json ?? '{}') as Config;
const url = new URL(config.url);
const print = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

if (mode === 'plain') {
  const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(url), { sdk: 'v2' });
  const batch = async (count: number): Promise<void> => {
    const handles = await Promise.all(
      Array.from({ length: count }, () => tasks.callToolAsTask(config.tool, config.args)),
    );
    await Promise.all(handles.map((handle) => handle.result()));
  };
  await batch(config.warmup);
  const cpu = process.cpuUsage();
  const started = Date.now();
  await batch(config.n);
  print({ phase: 'done', cpuMs: cpuMs(cpu), wallMs: Date.now() - started });
  await tasks.close();
  process.exit(0);
}

if (mode === 'worker') {
  const connection = { url: config.redis, maxRetriesPerRequest: null };
  const queue = new Queue(config.queue ?? 'bench', { connection });
  const storeMs: number[] = [];
  const windowMs: number[] = [];
  let measuring = false;
  const processor = taskProcessor({
    queue,
    connect: (_server, { sessionId }) =>
      sessionId === undefined
        ? TaskClient.connect(new StreamableHTTPClientTransport(url), { sdk: 'v2' })
        : TaskClient.connect(new JoinTransport(url, { sessionId }), { sdk: 'v1' }),
    onEvent: (event) => {
      if (event.type !== 'started' || !measuring) return;
      if (event.storeMs !== undefined) storeMs.push(event.storeMs);
      if (event.windowMs !== undefined) windowMs.push(event.windowMs);
    },
  });
  const worker = new Worker(config.queue ?? 'bench', processor, {
    connection,
    concurrency: Math.max(config.n, config.warmup),
  });
  let completed = 0;
  let cpu: NodeJS.CpuUsage | undefined;
  let started = 0;
  worker.on('completed', () => {
    completed += 1;
    if (completed === config.warmup) {
      cpu = process.cpuUsage();
      started = Date.now();
      measuring = true;
      print({ phase: 'warm' });
    }
    if (completed === config.warmup + config.n && cpu !== undefined) {
      print({ phase: 'done', cpuMs: cpuMs(cpu), wallMs: Date.now() - started, storeMs, windowMs });
    }
  });
  worker.on('ready', () => print({ phase: 'ready' }));
  worker.on('failed', (job, error) => console.error(`durable-child: job ${job?.id ?? '?'} failed: ${error.message}`));
  worker.on('error', (error) => console.error(`durable-child: ${error.message}`));
  process.on('SIGTERM', () => {
    void Promise.all([worker.close(), processor.close()]).then(() => process.exit(0));
  });
}
