/**
 * `npm run demo`: starts an example task server over stdio, runs a long analysis as a task,
 * prints its live statuses and its result, then shows a failing task and a plain tool.
 *
 * - `npm run demo`: against `examples/server.ts`, the MCP 2025-11-25 task wire, with an SDK v1
 *   `Client` wrapped by `new TaskClient(client)`.
 * - `npm run demo -- --ext`: against `examples/ext-server.ts`, the 2026-07-28
 *   `io.modelcontextprotocol/tasks` extension wire, through `TaskClient.connect(transport,
 *   { sdk: 'v2' })`, which negotiates the protocol era itself; the task's question arrives through
 *   `inputRequests` and is answered by `onElicitation`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import { TaskClient, TaskFailedError, type ElicitationCallback } from '../lib/index.js';

const ext = process.argv.slice(2).includes('--ext');
const started = Date.now();
const stamp = (): string => `${String(Date.now() - started).padStart(5)} ms`;

/** Answers the extension server's question as a user would: a full report, please. */
const onElicitation: ElicitationCallback = (params, context) => {
  console.log(`${stamp()}  question (${context.delivery}): ${params.message} -> full`);
  return { action: 'accept', content: { depth: 'full' } };
};

let tasks: TaskClient;
let closeClient = async (): Promise<void> => {};
if (ext) {
  // SDK v2 speaks the 2026-07-28 era; it is a dev dependency of this repository.
  const { StdioClientTransport: V2StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const transport = new V2StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', fileURLToPath(new URL('./ext-server.ts', import.meta.url))],
    env: { ...(process.env as Record<string, string>), EXT_STEP_MS: process.env.EXT_STEP_MS ?? '400' },
    stderr: 'inherit',
  });
  // The TaskClient owns the SDK client it made: close() closes it.
  tasks = await TaskClient.connect(transport, { sdk: 'v2', onElicitation });
} else {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', fileURLToPath(new URL('./server.ts', import.meta.url))],
    stderr: 'inherit',
  });
  const client = new Client({ name: 'mcp-task-client-demo', version: '1.0.0' });
  await client.connect(transport);
  tasks = new TaskClient(client);
  closeClient = () => client.close();
}
console.log(`Connected; task wire: ${tasks.wire}`);

console.log('\nCalling "analyze" as a task...');
const handle = await tasks.callToolAsTask('analyze', ext ? { id: 7 } : { id: 7, steps: 4 }, { timeoutMs: 60_000 });
console.log(`${stamp()}  created task ${handle.taskId?.slice(0, 8)}… (kind: ${handle.kind}, wire: ${handle.wire})`);
for await (const task of handle) {
  console.log(`${stamp()}  ${task.status.padEnd(14)} ${task.statusMessage ?? ''}`);
}
const result = await handle.result();
const text = result.content.find((block) => block.type === 'text');
console.log(`${stamp()}  result: ${text?.type === 'text' ? text.text : JSON.stringify(result)}`);

console.log('\nCalling "flaky", which fails...');
const flaky = await tasks.callToolAsTask(
  'flaky',
  ext ? { reason: 'disk full on /data' } : { afterMs: 300, reason: 'disk full on /data' },
);
try {
  await flaky.result();
} catch (error) {
  if (error instanceof TaskFailedError) console.log(`${stamp()}  ${error.name}: ${error.message}`);
  else throw error;
}

console.log('\nCalling "echo", which runs at once...');
const echo = await tasks.callToolAsTask('echo', { text: 'hello' });
console.log(`${stamp()}  kind: ${echo.kind}, result: ${JSON.stringify((await echo.result()).content)}`);

await tasks.close();
await closeClient();
