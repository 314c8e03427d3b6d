/**
 * `npm run soak`: 100,000 short tasks through one TaskClient, 200 in flight at a time, against the
 * SDK's `McpServer` with its in-memory task store, in this process. It prints the heap after a
 * full GC at every 25,000 tasks and fails when the last reading exceeds the first by more than
 * 10%, when a task failed, or when the process printed any warning (e.g. `MaxListenersExceededWarning`).
 * The tasks ask for a 10 s ttl, so the server's store forgets them too; what stays is the client's
 * own memory.
 *
 * Options: `--tasks N` (default 100000), `--concurrency N` (default 200), `--sdk v1|v2` (the client
 * SDK, default v1). Run with `node --expose-gc` (the npm script does).
 */
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TaskClient, type McpClient } from '../lib/index.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '200' },
    sdk: { type: 'string', default: 'v1' },
  },
});
const TOTAL = Number(values.tasks);
const CONCURRENCY = Number(values.concurrency);
const CHECKPOINT = Math.max(1, Math.floor(TOTAL / 4));
const MAX_GROWTH = 0.1;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('Run with node --expose-gc (npm run soak does)');

const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

function makeServer(): McpServer {
  const store = new InMemoryTaskStore();
  const server = new McpServer(
    { name: 'soak-server', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore: store, taskMessageQueue: new InMemoryTaskMessageQueue() },
  );
  server.experimental.tasks.registerToolTask(
    'tick',
    { description: 'Completes after a millisecond or two.', execution: { taskSupport: 'required' } },
    {
      createTask: async (extra) => {
        const task = await extra.taskStore.createTask({ ttl: 10_000, pollInterval: 50 });
        setTimeout(() => {
          const result: CallToolResult = { content: [{ type: 'text', text: 'tick' }] };
          void extra.taskStore.storeTaskResult(task.taskId, 'completed', result).catch(() => {});
        }, 1 + Math.floor(Math.random() * 2));
        return { task };
      },
      getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );
  return server;
}

async function connect(server: McpServer): Promise<McpClient> {
  if (values.sdk === 'v2') {
    const v2 = await import('@modelcontextprotocol/client');
    const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new v2.Client({ name: 'soak', version: '1.0.0' });
    await client.connect(clientSide);
    return client;
  }
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'soak', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

function heapMiB(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1_048_576;
}

const server = makeServer();
const client = await connect(server);
const tasks = new TaskClient(client, { ttlMs: 10_000, minPollIntervalMs: 10 });
let failures = 0;
tasks.on('error', () => {
  failures += 1;
});

const readings: number[] = [];
let started = 0;
let failed = 0;
let done = 0;
const began = Date.now();
async function worker(): Promise<void> {
  while (started < TOTAL) {
    started += 1;
    try {
      const handle = await tasks.callToolAsTask('tick');
      await handle.result();
    } catch (error) {
      failed += 1;
      if (failed <= 3) console.error(`task failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    done += 1;
    if (done % CHECKPOINT === 0) {
      const heap = heapMiB();
      readings.push(heap);
      console.log(`${String(done).padStart(7)} tasks  heap ${heap.toFixed(1)} MiB  (${((Date.now() - began) / 1000).toFixed(1)} s)`);
    }
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
await tasks.close();
await client.close();
await server.close();

const first = readings[0] ?? 0;
const last = readings.at(-1) ?? 0;
const growth = first === 0 ? 0 : (last - first) / first;
console.log(`heap growth from the first to the last reading: ${(growth * 100).toFixed(1)}% (limit ${MAX_GROWTH * 100}%)`);
console.log(`failed tasks: ${failed}; error events: ${failures}; process warnings: ${warnings.length}`);
for (const warning of warnings) console.log(`  ${warning}`);
if (growth > MAX_GROWTH || warnings.length > 0 || failed > 0) {
  console.error('soak FAILED');
  process.exitCode = 1;
} else {
  console.log('soak passed');
}
