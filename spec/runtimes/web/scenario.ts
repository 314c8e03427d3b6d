/**
 * What each runtime runs (a Worker in workerd, a script under Deno and Bun): connect to an
 * example server over Streamable HTTP with SDK v2, call `analyze` as a task, follow its statuses,
 * answer its question if it asks one, and report the outcome as JSON. With `deadlineMs` the call
 * has a deadline it cannot meet, which cancels the task on the server.
 *
 * Web APIs only, like the library: this folder is typed without Node (tsconfig.json here).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TaskClient, TaskError, TaskTimeoutError } from '../../../lib/index.js';

/** What a run reports. */
export interface Report {
  readonly wire: string;
  readonly taskId: string | undefined;
  readonly statuses: string[];
  readonly questions: string[];
  readonly result?: string;
  readonly error?: { readonly name: string; readonly message: string; readonly remoteCancel?: string };
}

/** Runs `analyze` on `server`; with `deadlineMs`, under that deadline. */
export async function runTask(server: URL, deadlineMs?: number): Promise<Report> {
  const questions: string[] = [];
  const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(server), {
    sdk: 'v2',
    clientInfo: { name: 'runtime-smoke', version: '1.0.0' },
    onElicitation: (params) => {
      questions.push(params.message);
      return { action: 'accept', content: { depth: 'full' } };
    },
  });
  const statuses: string[] = [];
  let handle;
  try {
    handle = await tasks.callToolAsTask(
      'analyze',
      { id: 7, steps: deadlineMs === undefined ? 3 : 100 },
      { timeoutMs: deadlineMs ?? 60_000 },
    );
    for await (const task of handle) statuses.push(task.status);
    const result = await handle.result();
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return { wire: handle.wire, taskId: handle.taskId, statuses, questions, result: text };
  } catch (error) {
    if (!(error instanceof TaskError)) throw error;
    const remoteCancel = error instanceof TaskTimeoutError ? error.remoteCancel : undefined;
    return {
      wire: tasks.wire,
      taskId: handle?.taskId,
      statuses,
      questions,
      error: { name: error.name, message: error.message, ...(remoteCancel === undefined ? {} : { remoteCancel }) },
    };
  } finally {
    await tasks.close();
  }
}
