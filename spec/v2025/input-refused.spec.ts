/**
 * A 2025-11-25 question nobody answers: an `elicitation/create` tagged with one of the client's
 * tasks ([V7]) that reaches no callback and no handler of the SDK client's. The server gets a
 * plain -32601, and the TaskClient reports it on `error` once, as the tasks extension reports the
 * same question; the task is not cancelled for it (the server was told and decides). Nothing is
 * reported for a request the client's callbacks no longer answer because it is closing, nor for
 * one the server cancelled while it waited for its task's `CreateTaskResult`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskNotSupportedError, type TaskError } from '../../lib/index.js';
import { until } from '../helpers.js';
import { askingTasks, questionFor } from '../support/asking.js';
import { connectScripted, NO_REPLY, type Json, type ScriptedPair } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function pairWithDelete(): Promise<ScriptedPair> {
  const pair = await connectScripted({
    tools: [{ name: 'delete', taskSupport: 'required' }],
    clientOptions: { capabilities: { elicitation: {} } },
  });
  cleanups.push(() => pair.close());
  return pair;
}

/** The reports of `tasks` on `error`. */
function reportsOf(tasks: TaskClient): TaskError[] {
  const reports: TaskError[] = [];
  tasks.on('error', (error) => reports.push(error));
  return reports;
}

describe('a 2025-11-25 question nobody answers', () => {
  it('the server gets -32601, and the TaskClient reports it once on error; the task is not cancelled', async () => {
    const pair = await pairWithDelete();
    const replies: Json[] = [];
    askingTasks(pair.server, 50, replies);
    const tasks = new TaskClient(pair.client);
    cleanups.push(() => tasks.close());
    const reports = reportsOf(tasks);
    const handle = await tasks.callToolAsTask('delete', {});
    await until(() => replies.length === 1 && reports.length === 1);
    expect(replies[0]).toMatchObject({ error: { code: -32601 } });
    expect(reports[0]).toBeInstanceOf(TaskNotSupportedError);
    expect(reports[0]).toMatchObject({ feature: 'elicitation', taskId: handle.taskId, toolName: 'delete' });
    expect(reports[0]!.message).toBe(
      'The task asks for elicitation/create, and nobody here answers it: pass onElicitation to the call or the TaskClient (the server was told that nobody answers it)',
    );
    // A few polls later: still one report, and the task still followed, not cancelled.
    const polls = pair.server.count('tasks/get');
    await until(() => pair.server.count('tasks/get') >= polls + 2);
    expect(reports).toHaveLength(1);
    expect(pair.server.count('tasks/cancel')).toBe(0);
    expect(handle.settled).toBe(false);
  });

  it('is not reported while the client closes: its callback answers no more, and the request passes on', async () => {
    const pair = await pairWithDelete();
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ status: 'working', pollInterval: 50 }));
    // The cancel of close({ cancelRunning: true }) is never answered: the task stays live meanwhile.
    pair.server.on('tasks/cancel', () => NO_REPLY);
    const tasks = new TaskClient(pair.client, {
      closeTimeoutMs: 600,
      onElicitation: () => ({ action: 'accept', content: { ok: true } }),
    });
    const reports = reportsOf(tasks);
    const handle = await tasks.callToolAsTask('delete', {});
    const closing = tasks.close({ cancelRunning: true });
    await until(() => pair.server.count('tasks/cancel') === 1);
    const reply = await pair.server.request('elicitation/create', questionFor(handle.taskId!));
    // Nothing here answers it any more (the SDK client has no handler of its own): -32601.
    expect(reply).toMatchObject({ error: { code: -32601 } });
    expect(reports.filter((report) => report instanceof TaskNotSupportedError)).toEqual([]);
    await closing;
  });

  it("is not reported when the server cancelled the request while it waited for its task's CreateTaskResult", async () => {
    const pair = await pairWithDelete();
    pair.server.on('tools/call', () => {
      const created = pair.server.tasks.createResult({ status: 'input_required', pollInterval: 50 });
      const taskId = (created.task as { taskId: string }).taskId;
      // Asked before the CreateTaskResult, then withdrawn ([R27]), then the task is created.
      void pair.server.request('elicitation/create', questionFor(taskId));
      const asked = pair.server.sent[pair.server.sent.length - 1] as { id: string };
      pair.server.notify('notifications/cancelled', { requestId: asked.id, reason: 'no longer needed' });
      return created;
    });
    const tasks = new TaskClient(pair.client);
    cleanups.push(() => tasks.close());
    const reports = reportsOf(tasks);
    const handle = await tasks.callToolAsTask('delete', {});
    const polls = pair.server.count('tasks/get');
    await until(() => pair.server.count('tasks/get') >= polls + 2);
    expect(handle.taskId).toBeDefined();
    expect(reports).toEqual([]);
    // The withdrawn request got no answer at all.
    expect(pair.server.log.filter((entry) => entry.kind === 'response')).toEqual([]);
  });
});
