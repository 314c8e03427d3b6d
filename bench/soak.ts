/**
 * `npm run soak`: 100,000 short tasks through one TaskClient, 200 in flight at a time, against the
 * SDK's `McpServer` with its in-memory task store. It prints the heap after a full GC at every
 * 25,000 tasks and fails when the last reading exceeds the first by more than 10%, when a task
 * failed, or when the process printed any warning (e.g. `MaxListenersExceededWarning`).
 *
 * The server runs in a child process (this same file with `--serve`, over stdio), so the heap
 * readings are the client's alone. In one process they were not: the server's store keeps every
 * task for its ttl (10 s here, long enough that no task expires before its result is read while
 * the machine is busy), so the first reading came while that store was still filling and the
 * comparison measured the server's memory (+14% on SDK v1, +50% on SDK v2), not the client's.
 *
 * Options: `--tasks N` (default 100000), `--concurrency N` (default 200), `--sdk v1|v2` (the client
 * SDK, default v1). Run with `node --expose-gc` (the npm script does).
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TaskClient, type McpClient } from '../lib/index.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '200' },
    sdk: { type: 'string', default: 'v1' },
    serve: { type: 'boolean', default: false },
  },
});
const TOTAL = Number(values.tasks);
const CONCURRENCY = Number(values.concurrency);
const CHECKPOINT = Math.max(1, Math.floor(TOTAL / 4));
const MAX_GROWTH = 0.1;

/** The task ttl the server applies (and the client asks for). */
const TTL_MS = 10_000;

function makeServer(): McpServer {
  const store = new InMemoryTaskStore();
  const server = new McpServer(
    { name: 'soak-server', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: store,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  server.experimental.tasks.registerToolTask(
    'tick',
    { description: 'Completes after a millisecond or two.', execution: { taskSupport: 'required' } },
    {
      createTask: async (extra) => {
        const task = await extra.taskStore.createTask({ ttl: TTL_MS, pollInterval: 50 });
        setTimeout(
          () => {
            const result: CallToolResult = { content: [{ type: 'text', text: 'tick' }] };
            void extra.taskStore.storeTaskResult(task.taskId, 'completed', result).catch(() => {});
          },
          1 + Math.floor(Math.random() * 2),
        );
        return { task };
      },
      getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );
  return server;
}

/** Starts this file with `--serve` in a child process and connects a client of the chosen SDK to it over stdio. */
async function connect(): Promise<McpClient> {
  const parameters = {
    command: process.execPath,
    // The same loader (tsx) as this process.
    args: [...process.execArgv, fileURLToPath(import.meta.url), '--serve'],
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stderr: 'inherit' as const,
  };
  if (values.sdk === 'v2') {
    const [{ Client }, { StdioClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/client'),
      import('@modelcontextprotocol/client/stdio'),
    ]);
    const client = new Client({ name: 'soak', version: '1.0.0' });
    await client.connect(new StdioClientTransport(parameters));
    return client;
  }
  const [{ Client }, { StdioClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
  ]);
  const client = new Client({ name: 'soak', version: '1.0.0' });
  await client.connect(new StdioClientTransport(parameters));
  return client;
}

/** The measured run, in this (the client's) process. */
async function soak(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('Run with node --expose-gc (npm run soak does)');
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));
  const heapMiB = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed / 1_048_576;
  };

  const client = await connect();
  const tasks = new TaskClient(client, { ttlMs: TTL_MS, minPollIntervalMs: 10 });
  let failures = 0;
  tasks.on('error', () => {
    failures += 1;
  });

  const readings: number[] = [];
  let started = 0;
  let failed = 0;
  let done = 0;
  const began = Date.now();
  const worker = async (): Promise<void> => {
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
        console.log(
          `${String(done).padStart(7)} tasks  heap ${heap.toFixed(1)} MiB  (${((Date.now() - began) / 1000).toFixed(1)} s)`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  await tasks.close();
  await client.close();

  const first = readings[0] ?? 0;
  const last = readings.at(-1) ?? 0;
  const growth = first === 0 ? 0 : (last - first) / first;
  console.log(
    `heap growth from the first to the last reading: ${(growth * 100).toFixed(1)}% (limit ${MAX_GROWTH * 100}%)`,
  );
  console.log(`failed tasks: ${failed}; error events: ${failures}; process warnings: ${warnings.length}`);
  for (const warning of warnings) console.log(`  ${warning}`);
  if (growth > MAX_GROWTH || warnings.length > 0 || failed > 0) {
    console.error('soak FAILED');
    process.exitCode = 1;
  } else {
    console.log('soak passed');
  }
}

if (values.serve) {
  // The server side: runs until the client closes the connection (and with it this process). The
  // SDK's stdio server transport adds a 'drain' listener to stdout for each message it writes
  // while the pipe is full, which with 200 tasks in flight passes Node's default of 10 and prints
  // MaxListenersExceededWarning from this (the server's) process. The limit is the server's
  // business: the client's process still fails the run on any warning.
  process.stdout.setMaxListeners(0);
  await makeServer().connect(new StdioServerTransport());
} else {
  await soak();
}
