/**
 * `npm run demo`: starts the example task server over stdio, runs a long analysis as a task,
 * prints its live statuses and its result, then shows a failing task and a plain tool.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import { TaskClient, TaskFailedError } from '../lib/index.js';

const serverPath = fileURLToPath(new URL('./server.ts', import.meta.url));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: ['--import', 'tsx', serverPath],
  stderr: 'inherit',
});
const client = new Client({ name: 'mcp-task-client-demo', version: '1.0.0' });
await client.connect(transport);

const tasks = new TaskClient(client);
const started = Date.now();
const stamp = (): string => `${String(Date.now() - started).padStart(5)} ms`;

console.log('Calling "analyze" as a task...');
const handle = await tasks.callToolAsTask('analyze', { id: 7, steps: 4 }, { timeoutMs: 60_000 });
console.log(`${stamp()}  created task ${handle.taskId?.slice(0, 8)}… (kind: ${handle.kind})`);
for await (const task of handle) {
  console.log(`${stamp()}  ${task.status.padEnd(14)} ${task.statusMessage ?? ''}`);
}
const result = await handle.result();
const text = result.content.find((block) => block.type === 'text');
console.log(`${stamp()}  result: ${text?.type === 'text' ? text.text : JSON.stringify(result)}`);

console.log('\nCalling "flaky", which fails...');
const flaky = await tasks.callToolAsTask('flaky', { afterMs: 300, reason: 'disk full on /data' });
try {
  await flaky.result();
} catch (error) {
  if (error instanceof TaskFailedError) console.log(`${stamp()}  ${error.name}: ${error.message}`);
  else throw error;
}

console.log('\nCalling "echo", which does not support tasks...');
const echo = await tasks.callToolAsTask('echo', { text: 'hello' });
console.log(`${stamp()}  kind: ${echo.kind}, result: ${JSON.stringify((await echo.result()).content)}`);

await tasks.close();
await client.close();
