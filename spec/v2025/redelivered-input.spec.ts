/**
 * Answering later on the 2025-11-25 wire (issue 23, "answering later"): a task whose question
 * went to a connection that is gone (its process died) can be answered from a new process when the
 * server hands pending input out again to whoever waits on `tasks/result` ([R29]: a client that
 * sees `input_required` calls `tasks/result`, and the server delivers the task's requests while
 * that call is open, tagged with the task, [R31]). The scripted server below plays such a server:
 * the task already waits for input when this process resumes it, and the question is sent only
 * while a `tasks/result` for that task is open on this connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  TaskFailedError,
  TaskNotSupportedError,
  type ElicitResult,
  type InputContext,
} from '../../lib/index.js';
import { questionFor } from '../support/asking.js';
import { connectScripted, rpcError, type ScriptedPair } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/**
 * A server holding task `task-1`, started by an earlier process, in `input_required`. Its
 * `tasks/result` asserts the task it is asked for, sends the pending question tagged with the
 * task, and completes the task with the answer it got (or fails it on a decline).
 */
async function redeliveringServer(): Promise<{ pair: ScriptedPair; taskId: string; violations: string[] }> {
  const violations: string[] = [];
  const pair = await connectScripted({
    tools: [{ name: 'delete', taskSupport: 'required' }],
    clientOptions: { capabilities: { elicitation: {} } },
  });
  const { server } = pair;
  const { taskId } = server.tasks.create({
    status: 'input_required',
    statusMessage: 'waiting for a yes',
    pollInterval: 200,
  }) as { taskId: string };
  server.on('tools/call', () => {
    violations.push('tools/call: a resumed task must not be called again');
    throw rpcError(-32600, 'no new calls in this test');
  });
  server.on('tasks/result', async (params) => {
    if (params.taskId !== taskId) {
      violations.push(`tasks/result for ${String(params.taskId)}`);
      throw rpcError(-32602, `Task not found: ${String(params.taskId)}`);
    }
    const status = String(server.tasks.get(taskId).status);
    if (status === 'input_required') {
      const reply = await server.request('elicitation/create', questionFor(taskId));
      const answer = reply.result as { action?: string; content?: { ok?: unknown } } | undefined;
      if (answer?.action === 'accept' && answer.content?.ok === true) {
        server.tasks.finish(
          taskId,
          'completed',
          { result: { content: [{ type: 'text', text: 'deleted /data/a' }] } },
          {},
          true,
        );
      } else {
        server.tasks.finish(
          taskId,
          'failed',
          { result: { content: [{ type: 'text', text: 'not confirmed' }], isError: true } },
          {},
          true,
        );
      }
    }
    return server.tasks.handlers['tasks/result']!(params, undefined as never);
  });
  cleanups.push(() => pair.close());
  return { pair, taskId, violations };
}

describe('a question redelivered through tasks/result to a process that resumed the task', () => {
  it("is answered by the resume's own callback, and the result arrives", async () => {
    const { pair, taskId, violations } = await redeliveringServer();
    const tasks = new TaskClient(pair.client);
    cleanups.push(() => tasks.close());
    const seen: Array<{ taskId: string | undefined; message: unknown }> = [];
    const handle = tasks.resume(taskId, {
      toolName: 'delete',
      timeoutMs: 10_000,
      onElicitation: (params: { message?: unknown }, ctx: InputContext): ElicitResult => {
        seen.push({ taskId: ctx.taskId, message: params.message });
        return { action: 'accept', content: { ok: true } };
      },
    });
    const result = await handle.result();
    expect(result.content).toEqual([{ type: 'text', text: 'deleted /data/a' }]);
    expect(seen).toEqual([{ taskId, message: 'Delete /data/a?' }]);
    // The answer went back on the request the server sent (one elicitation, one reply), and the
    // task was never called again.
    expect(pair.server.log.filter((entry) => entry.kind === 'response')).toHaveLength(1);
    expect(pair.server.count('tools/call')).toBe(0);
    expect(pair.server.params('tasks/result').every((p) => p.taskId === taskId)).toBe(true);
    expect(violations).toEqual([]);
    expect(handle.task?.status).toBe('completed');
  });

  it("with no callback anywhere, the server hears why nothing answers, and the handle settles with the task's real failure", async () => {
    const { pair, taskId, violations } = await redeliveringServer();
    const tasks = new TaskClient(pair.client);
    cleanups.push(() => tasks.close());
    const reports: unknown[] = [];
    tasks.on('error', (error) => reports.push(error));
    const handle = tasks.resume(taskId, { toolName: 'delete', timeoutMs: 10_000 });
    // Nothing answers: the SDK replies with an error, the scripted server fails the task.
    const result = await handle.result().catch((error: unknown) => error);
    const reply = pair.server.log.find((entry) => entry.kind === 'response');
    // The error names the cause and the fix.
    expect(reply?.message).toMatchObject({
      error: {
        code: -32601,
        message: expect.stringMatching(
          /No elicitation handler.*this client cannot answer elicitation requests, so nobody was asked/,
        ),
      },
    });
    expect(result).toBeInstanceOf(TaskFailedError);
    expect(result).toMatchObject({
      taskId,
      result: { isError: true, content: [{ type: 'text', text: 'not confirmed' }] },
    });
    // The client hears of it too, as on the tasks extension: one report naming the task and what
    // it asked for. A resumed task is only reported on, never cancelled for it.
    expect(reports).toEqual([expect.any(TaskNotSupportedError)]);
    expect(reports[0]).toMatchObject({ feature: 'elicitation', taskId, toolName: 'delete' });
    expect((reports[0] as Error).message).toMatch(
      /^The task asks for elicitation\/create, and nobody here answers it: pass onElicitation to the call or the TaskClient/,
    );
    expect(pair.server.count('tasks/cancel')).toBe(0);
    expect(violations).toEqual([]);
    expect(handle.settled).toBe(true);
  });
});
