/**
 * A web page that runs an MCP tool as a task: SDK v2's Streamable HTTP client transport, the
 * library's `TaskClient.connect`, a live status line with a progress bar, an HTML form for the
 * task's questions, and a Cancel button that cancels the task on the server. `npm run
 * example:browser` bundles it (examples/browser/build.ts) and serves it with both example servers.
 *
 * In an application, import from 'mcp-task-client' (this repository imports its own source).
 * `?server=<url>` fills in the endpoint.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TaskClient, TaskError, type CallToolResult, type TaskHandle } from '../../../lib/index.js';
import { askInForm } from './form.js';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const server = $<HTMLInputElement>('server');
const connectButton = $<HTMLButtonElement>('connect');
const connection = $<HTMLSpanElement>('connection');
const tool = $<HTMLSelectElement>('tool');
const args = $<HTMLTextAreaElement>('args');
const run = $<HTMLButtonElement>('run');
const cancel = $<HTMLButtonElement>('cancel');
const status = $<HTMLParagraphElement>('status');
const progress = $<HTMLProgressElement>('progress');
const question = $<HTMLFormElement>('question');
const result = $<HTMLDivElement>('result');
const error = $<HTMLParagraphElement>('error');
const history = $<HTMLOListElement>('history');

server.value = new URLSearchParams(location.search).get('server') ?? server.value;

let tasks: TaskClient | undefined;
let running: TaskHandle | undefined;

const textOf = (value: CallToolResult): string =>
  value.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');

function showStatus(line: string): void {
  status.textContent = line;
  const item = document.createElement('li');
  item.textContent = line;
  history.append(item);
}

connectButton.onclick = async () => {
  connectButton.disabled = true;
  error.textContent = '';
  try {
    // Connecting again ends the task running on the old connection: cancel it on the server.
    await tasks?.close({ cancelRunning: true });
    // The page answers elicitations in its form: declare the capability.
    tasks = await TaskClient.connect(new StreamableHTTPClientTransport(new URL(server.value)), {
      sdk: 'v2',
      clientInfo: { name: 'browser-example', version: '1.0.0' },
      capabilities: { elicitation: {} },
    });
    const tools = (await tasks.tools()).filter((t) => t.taskSupport !== 'forbidden');
    tool.replaceChildren(...tools.map((t) => new Option(`${t.name} (${t.taskSupport})`, t.name)));
    tool.disabled = run.disabled = tools.length === 0;
    connection.textContent = `connected, task wire ${tasks.wire}`;
  } catch (thrown) {
    connection.textContent = 'not connected';
    error.textContent = `Could not connect: ${String(thrown)}`;
  } finally {
    connectButton.disabled = false;
  }
};

run.onclick = async () => {
  if (tasks === undefined) return;
  run.disabled = true;
  result.textContent = error.textContent = '';
  history.replaceChildren();
  progress.value = 0;
  // Indeterminate until the first progress notification (the tasks extension sends none).
  progress.removeAttribute('value');
  try {
    const handle = await tasks.callToolAsTask(tool.value, JSON.parse(args.value) as Record<string, unknown>, {
      timeoutMs: 10 * 60_000,
      onProgress: (p) => {
        progress.max = p.total ?? p.progress + 1;
        progress.value = p.progress;
      },
      onElicitation: (params, context) => askInForm(question, params, context.signal),
    });
    running = handle;
    status.dataset.taskId = handle.taskId ?? '';
    cancel.disabled = handle.kind !== 'task';
    for await (const task of handle)
      showStatus(task.statusMessage === undefined ? task.status : `${task.status}: ${task.statusMessage}`);
    result.textContent = textOf(await handle.result());
    progress.max = progress.value = 1;
  } catch (thrown) {
    error.textContent = thrown instanceof TaskError ? `${thrown.name}: ${thrown.message}` : String(thrown);
  } finally {
    running = undefined;
    cancel.disabled = true;
    run.disabled = false;
  }
};

cancel.onclick = async () => {
  cancel.disabled = true;
  // tasks/cancel to the server; result() then rejects with TaskCancelledError.
  await running?.cancel().catch((thrown: unknown) => (error.textContent = `Cancel failed: ${String(thrown)}`));
};
