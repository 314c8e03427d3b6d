/**
 * Real-server differences D9, D10, D11, D12, D13, D14, D15, D17, D18 and D19 (docs/spec-rules.md, "D: measured
 * differences between real servers"), each reproduced by a scripted server answering the way the
 * TypeScript SDK 1.32.2, the Python SDK 1.29.0 and mcp-go 0.48.0 servers do (and, for D19, Rust's
 * rmcp, as read in its task handler), on a ManualClock so every poll count and every delay is
 * exact. What the library does about each difference is in docs/reliability.md ("Reference:
 * server differences").
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskCancelledError,
  TaskError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskRpcError,
  TaskTimeoutError,
  type CallToolAsTaskOptions,
  type TaskClient,
  type TaskClientOptions,
  type TaskHandle,
} from '../../lib/index.js';
import { collectSnapshots as collect, flush, rejection, within } from '../helpers.js';
import {
  FULL_TASK_CAPS,
  NO_REPLY,
  creating,
  rpcError,
  type HandlerContext,
  type Json,
  type LoggedMessage,
  type RpcFailure,
  type ScriptedServer,
  type ScriptedPairOptions,
} from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const TOOLS = [
  { name: 'slow', taskSupport: 'optional' as const },
  { name: 'job', taskSupport: 'required' as const },
];
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The scripted rig (see spec/support/scripted-task-client.ts). */
function setup(options: ScriptedPairOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), { tools: TOOLS, ...options }, taskOptions);
}

/** The outcome of every `settled` event, and the names of the outcome events, in order. */
function outcomes(tasks: TaskClient): { settled: string[]; events: string[] } {
  const seen = { settled: [] as string[], events: [] as string[] };
  tasks.on('settled', (metrics) => seen.settled.push(metrics.outcome));
  for (const name of ['completed', 'failed', 'cancelled', 'expired'] as const)
    tasks.on(name, () => seen.events.push(name));
  return seen;
}

/** Messages along an error's cause chain (a few links deep). */
function messages(error: unknown): string[] {
  const found: string[] = [];
  for (let link = error, depth = 0; link instanceof Error && depth < 8; link = link.cause, depth += 1)
    found.push(link.message);
  return found;
}

const status = (server: ScriptedServer, taskId: string): string => String(server.tasks.get(taskId).status);

/** Call options whose `onElicitation` accepts (`{ ok: true }`) and records the task each question named. */
function acceptingInto(asked: Array<string | undefined>): CallToolAsTaskOptions {
  return {
    onElicitation: (_params, ctx) => {
      asked.push(ctx.taskId);
      return { action: 'accept', content: { ok: true } };
    },
  };
}

describe('tasks/cancel on a working task: every server says cancelled, in its own way (D10)', () => {
  it('TypeScript shape: cancel() returns the server’s cancelled snapshot, result() rejects TaskCancelledError with its statusMessage, tracking stops (D10)', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'ts-cancel', statusMessage: 'step 1/2' });
    const seen = outcomes(tasks);
    const handle = await tasks.callToolAsTask('job');
    const updates = collect(handle);
    await clock.advance(1_000); // one poll: still working
    expect(server.count('tasks/get')).toBe(1);
    // The board's tasks/cancel answers as the TypeScript SDK does.
    const snapshot = await within(handle.cancel());
    expect(snapshot).toMatchObject({
      taskId: 'ts-cancel',
      status: 'cancelled',
      statusMessage: 'Client cancelled task execution.',
    });
    expect(handle.task).toEqual(snapshot);
    const error = (await rejection(handle.result())) as TaskCancelledError;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error.statusMessage).toBe('Client cancelled task execution.');
    expect(error.task).toEqual(snapshot);
    expect(await updates).toEqual(['working:step 1/2', 'cancelled:Client cancelled task execution.']);
    // Nothing more is asked about a cancelled task: no polls, no tasks/result (D7). The one read
    // besides the poll is the last look before the cancel.
    await clock.advance(10_000);
    expect(server.count('tasks/get')).toBe(2);
    expect(server.count('tasks/result')).toBe(0);
    expect(server.params('tasks/cancel')).toEqual([{ taskId: 'ts-cancel' }]);
    expect(seen).toEqual({ settled: ['cancelled'], events: ['cancelled'] });
    expect(errors).toEqual([]);
    expect(tasks.active).toBe(0);
  });

  it('Python shape: the reply keeps the old statusMessage and the work goes on updating the cancelled task; those later snapshots change nothing and raise no error (D10)', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'py-cancel', statusMessage: 'step 1/3', pollInterval: 500 });
    // Python flips the status only; the statusMessage stays as it was.
    server.on('tasks/cancel', (params) => server.tasks.update(String(params.taskId), { status: 'cancelled' }));
    const seen = outcomes(tasks);
    const handle = await tasks.callToolAsTask('job');
    const updates = collect(handle);
    await clock.advance(300);
    const snapshot = await within(handle.cancel());
    expect(snapshot).toMatchObject({ taskId: 'py-cancel', status: 'cancelled', statusMessage: 'step 1/3' });
    const gets = server.count('tasks/get');
    // The work is not stopped: it keeps changing statusMessage and lastUpdatedAt, and notifies.
    await clock.advance(700);
    server.tasks.update('py-cancel', { statusMessage: 'step 2/3' }, true);
    await clock.advance(700);
    server.tasks.update('py-cancel', { statusMessage: 'step 3/3' }, true);
    await clock.advance(5_000);
    expect(server.sent.filter((message) => message.method === 'notifications/tasks/status')).toHaveLength(2);
    const error = (await rejection(handle.result())) as TaskCancelledError;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error.statusMessage).toBe('step 1/3');
    // The first cancelled snapshot is the end: later ones neither replace it nor reach iterators.
    expect(handle.task).toEqual(snapshot);
    expect(await updates).toEqual(['working:step 1/3', 'cancelled:step 1/3']);
    expect(server.count('tasks/get')).toBe(gets);
    expect(server.count('tasks/result')).toBe(0);
    expect(server.count('tasks/cancel')).toBe(1);
    expect(seen).toEqual({ settled: ['cancelled'], events: ['cancelled'] });
    expect(errors).toEqual([]);
  });

  it('mcp-go shape: the cancelled notification overtakes the tasks/cancel reply (whole-second stamps, no pollInterval); cancel() resolves with it and the task settles once (D10)', async () => {
    const { server, tasks, clock, errors } = await setup({ wholeSeconds: true });
    creating(server, { taskId: 'go-cancel', pollInterval: undefined });
    // mcp-go cancels the work's context, which notifies before the reply goes out.
    server.on('tasks/cancel', (params) =>
      server.tasks.update(
        String(params.taskId),
        { status: 'cancelled', statusMessage: 'Task cancelled by request' },
        true,
      ),
    );
    const seen = outcomes(tasks);
    const handle = await tasks.callToolAsTask('job');
    const updates = collect(handle);
    const snapshot = await within(handle.cancel());
    expect(snapshot).toMatchObject({
      taskId: 'go-cancel',
      status: 'cancelled',
      statusMessage: 'Task cancelled by request',
    });
    // The same second as the creation: createdAt == lastUpdatedAt, and the cancel still counts.
    expect(snapshot?.lastUpdatedAt).toBe(snapshot?.createdAt);
    const error = (await rejection(handle.result())) as TaskCancelledError;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error.statusMessage).toBe('Task cancelled by request');
    expect(await updates).toEqual(['working:', 'cancelled:Task cancelled by request']);
    await clock.advance(10_000);
    expect(server.count('tasks/cancel')).toBe(1);
    expect(server.count('tasks/get')).toBe(1); // the last look before the cancel
    expect(server.count('tasks/result')).toBe(0);
    expect(seen).toEqual({ settled: ['cancelled'], events: ['cancelled'] });
    expect(errors).toEqual([]);
  });

  it('mcp-go shape under a deadline: the notification overtaking the cancel reply does not turn the timeout into a cancellation; remoteCancel says cancelled (D10)', async () => {
    const { server, tasks, clock, errors } = await setup({ wholeSeconds: true });
    creating(server, { taskId: 'go-deadline', pollInterval: undefined });
    server.on('tasks/cancel', (params) =>
      server.tasks.update(
        String(params.taskId),
        { status: 'cancelled', statusMessage: 'Task cancelled by request' },
        true,
      ),
    );
    const seen = outcomes(tasks);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 2_000 });
    const yielded: string[] = [];
    const iterating = within(
      (async () => {
        for await (const task of handle.updates()) yielded.push(`${task.status}:${task.statusMessage ?? ''}`);
      })().then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    const failure = rejection(handle.result());
    await clock.advance(2_000);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('cancelled');
    expect(error.task).toMatchObject({ status: 'cancelled', statusMessage: 'Task cancelled by request' });
    expect(await iterating).toBeInstanceOf(TaskTimeoutError);
    expect(yielded.at(0)).toBe('working:');
    expect(yielded.at(-1)).toBe('cancelled:Task cancelled by request');
    expect(server.count('tasks/cancel')).toBe(1);
    expect(server.count('tasks/result')).toBe(0);
    expect(seen.settled).toEqual(['timeout']);
    expect(errors).toEqual([]);
  });
});

/** How each server words its refusal to cancel a terminal task (D11). */
const TERMINAL_REFUSALS: ReadonlyArray<readonly [string, (status: string) => string, number]> = [
  ['TypeScript', (s) => `Cannot cancel task in terminal status: ${s}`, -32602],
  ['Python', (s) => `Cannot cancel task in terminal state '${s}'`, -32602],
  ['mcp-go', (s) => `cannot cancel task in terminal status: ${s}`, -32602],
  // D19: rmcp refuses with "invalid request", and does not say the status.
  ['Rust rmcp', () => 'task already completed', -32600],
];

/** How each server hands out a failed task's result (D6), all saying "disk full". */
const FAILED_PAYLOADS: Readonly<Record<string, { result: Json } | { error: RpcFailure }>> = {
  TypeScript: { result: { isError: true, content: [{ type: 'text', text: 'disk full' }] } },
  Python: { result: {} },
  'mcp-go': { error: rpcError(-32603, 'disk full') },
  'Rust rmcp': { error: rpcError(-32603, 'task failed: disk full') },
};

/**
 * The task changes (`end`) right after the last look before the cancel answered, so the cancel
 * finds it ended: the race [V23] is about. Later reads go to `after`.
 */
function endsAfterTheLook(server: ScriptedServer, end: () => void, after = server.tasks.handlers['tasks/get']!): void {
  server.on('tasks/get', (params) => {
    const reply = server.tasks.get(String(params.taskId));
    server.on('tasks/get', after);
    end();
    return reply;
  });
}

/** A tasks/cancel that refuses terminal tasks with `code` and `words`, and cancels others. */
function refusingTerminal(server: ScriptedServer, words: (status: string) => string, code: number): void {
  server.on('tasks/cancel', (params) => {
    const taskId = String(params.taskId);
    const current = status(server, taskId);
    if (TERMINAL.has(current)) throw rpcError(code, words(current));
    return server.tasks.update(taskId, { status: 'cancelled' });
  });
}

describe('cancelling a task that already ended: -32602 (rmcp: -32600) in each server’s words, and the truth is reported (D11, D19)', () => {
  for (const [name, words, code] of TERMINAL_REFUSALS) {
    it(`${name}: a task that completed unseen: cancel() returns the completed snapshot and result() the tool’s result, with no cancelled event (D11)`, async () => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 'done-unseen' });
      refusingTerminal(server, words, code);
      const seen = outcomes(tasks);
      const handle = await tasks.callToolAsTask('job');
      await clock.advance(200);
      // Finished without a notification, before the next poll, just after the last look.
      endsAfterTheLook(server, () =>
        server.tasks.finish(
          'done-unseen',
          'completed',
          { result: textResult('finished first') },
          { statusMessage: 'all done' },
        ),
      );
      const snapshot = await within(handle.cancel());
      expect(snapshot).toMatchObject({ taskId: 'done-unseen', status: 'completed', statusMessage: 'all done' });
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'finished first' }]);
      expect(server.count('tasks/cancel')).toBe(1); // a -32602 is an answer, never retried
      expect(server.count('tasks/get')).toBe(2); // the last look, and the one re-read
      expect(server.count('tasks/result')).toBe(1);
      expect(seen).toEqual({ settled: ['completed'], events: ['completed'] });
      expect(errors).toEqual([]);
    });

    it(`${name}: a task that failed unseen: cancel() returns the failed snapshot and result() rejects TaskFailedError with the server’s reason (D11, D6)`, async () => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 'failed-unseen' });
      refusingTerminal(server, words, code);
      const seen = outcomes(tasks);
      const handle = await tasks.callToolAsTask('job');
      await clock.advance(200);
      endsAfterTheLook(server, () =>
        server.tasks.finish('failed-unseen', 'failed', FAILED_PAYLOADS[name]!, { statusMessage: 'disk full' }),
      );
      const snapshot = await within(handle.cancel());
      expect(snapshot).toMatchObject({ taskId: 'failed-unseen', status: 'failed' });
      const error = (await rejection(handle.result())) as TaskFailedError;
      expect(error).toBeInstanceOf(TaskFailedError);
      expect(error.message).toContain('disk full');
      expect(error.task?.status).toBe('failed');
      expect(server.count('tasks/cancel')).toBe(1);
      expect(seen).toEqual({ settled: ['failed'], events: ['failed'] });
      expect(errors).toEqual([]);
    });

    it(`${name}: a task someone else cancelled: cancel() returns that cancelled snapshot and result() rejects TaskCancelledError with its statusMessage (D11)`, async () => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 'cancelled-unseen' });
      refusingTerminal(server, words, code);
      const seen = outcomes(tasks);
      const handle = await tasks.callToolAsTask('job');
      await clock.advance(200);
      endsAfterTheLook(server, () =>
        server.tasks.update('cancelled-unseen', { status: 'cancelled', statusMessage: 'Stopped by operator' }),
      );
      const snapshot = await within(handle.cancel());
      expect(snapshot).toMatchObject({
        taskId: 'cancelled-unseen',
        status: 'cancelled',
        statusMessage: 'Stopped by operator',
      });
      const error = (await rejection(handle.result())) as TaskCancelledError;
      expect(error).toBeInstanceOf(TaskCancelledError);
      expect(error.statusMessage).toBe('Stopped by operator');
      expect(server.count('tasks/cancel')).toBe(1);
      expect(server.count('tasks/result')).toBe(0); // D7: never asked for a cancelled task
      expect(seen).toEqual({ settled: ['cancelled'], events: ['cancelled'] });
      expect(errors).toEqual([]);
    });
  }
});

/**
 * A tasks/cancel that always refuses with `refusal`, and a tasks/get served by the board until
 * then and by `afterRefusal` from then on (the re-read after the refusal).
 */
function refusingThenReading(server: ScriptedServer, refusal: RpcFailure & Error, afterRefusal: () => unknown): void {
  const board = server.tasks.handlers['tasks/get']!;
  let refused = false;
  server.on('tasks/cancel', () => {
    refused = true;
    throw refusal;
  });
  server.on('tasks/get', (params, ctx) => (refused ? afterRefusal() : board(params, ctx)));
}

describe('a cancel the server refuses while the task still runs (D19)', () => {
  for (const code of [-32600, -32602, -32603]) {
    it(`${code}: the re-read shows it working, so cancel() rejects with the server's refusal and the task is still followed`, async () => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 'stubborn', ttl: 3_600_000, pollInterval: 1_000 });
      server.on('tasks/cancel', () => {
        throw rpcError(code, 'this task cannot be cancelled');
      });
      const handle = await tasks.callToolAsTask('job');
      const error = (await rejection(handle.cancel())) as TaskRpcError;
      expect(error).toBeInstanceOf(TaskRpcError);
      expect(error).toMatchObject({ code, method: 'tasks/cancel' });
      expect(error.message).toContain('this task cannot be cancelled');
      expect(server.count('tasks/cancel')).toBe(1);
      // The last look, and the re-read after the refusal.
      expect(server.count('tasks/get')).toBe(2);
      expect(handle.settled).toBe(false);
      expect(handle.task?.status).toBe('working');
      server.tasks.finish('stubborn', 'completed', { result: textResult('done anyway') });
      await clock.advance(1_000);
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'done anyway' }]);
      expect(errors).toEqual([]);
    });
  }

  it('a resumed handle nobody observed yet: the refused cancel rejects, and the task is followed from then on to its result', async () => {
    const { server, tasks, clock, errors } = await setup();
    server.tasks.create({ taskId: 'resumed-stubborn', ttl: 3_600_000, pollInterval: 1_000 });
    server.on('tasks/cancel', () => {
      throw rpcError(-32600, 'task cannot be cancelled');
    });
    const handle = tasks.resume('resumed-stubborn', { toolName: 'job' });
    expect(await rejection(handle.cancel())).toMatchObject({ name: 'TaskRpcError', code: -32600 });
    const reads = server.count('tasks/get');
    await clock.advance(1_000);
    expect(server.count('tasks/get'), 'polled after the refusal').toBeGreaterThan(reads);
    server.tasks.finish('resumed-stubborn', 'completed', { result: textResult('kept running') });
    await clock.advance(1_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'kept running' }]);
    expect(errors).toEqual([]);
  });

  it('rmcp forgets a result once fetched: -32002 from tasks/result for a task seen completed is TaskNotFoundError, not the task failing', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'consumed', ttl: 3_600_000, pollInterval: 1_000 });
    server.on('tasks/result', () => {
      throw rpcError(-32002, 'task not found: consumed');
    });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.finish('consumed', 'completed', { result: textResult('gone') });
    await clock.advance(1_000);
    const error = await rejection(handle.result());
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as TaskNotFoundError).cause).toMatchObject({ code: -32002 });
  });

  it('under a deadline, the remote outcome of a refused cancel is failed, not acknowledged', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'stubborn-deadline', ttl: 3_600_000, pollInterval: 1_000 });
    server.on('tasks/cancel', () => {
      throw rpcError(-32602, 'no such task');
    });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 2_500 });
    const failure = rejection(handle.result());
    await clock.advance(2_500);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('failed');
  });

  it('under a deadline, a refused cancel whose re-read never answers is failed once the grace runs out', async () => {
    const { server, tasks, clock } = await setup({}, { cancelGraceMs: 2_000 });
    creating(server, { taskId: 'refused-silent', ttl: 3_600_000, pollInterval: 60_000 });
    // The last look is answered; the re-read after the refusal never is.
    refusingThenReading(server, rpcError(-32603, 'cannot cancel now'), () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const failure = rejection(handle.result(), 10_000);
    await clock.advance(1_000 + 2_000);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('failed');
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('an earlier refusal does not count for a later cancel: one that goes unanswered under a deadline is unknown', async () => {
    const { server, tasks, clock } = await setup({}, { cancelGraceMs: 2_000 });
    creating(server, { taskId: 'refused-then-silent', ttl: 3_600_000, pollInterval: 60_000 });
    let cancels = 0;
    server.on('tasks/cancel', () => {
      cancels += 1;
      if (cancels === 1) throw rpcError(-32603, 'cannot cancel now');
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 5_000 });
    const failure = rejection(handle.result(), 10_000);
    expect(await rejection(handle.cancel())).toMatchObject({ code: -32603 });
    await clock.advance(5_000 + 2_000);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('unknown');
    expect(cancels).toBe(2);
  });

  it('a refused cancel whose re-read fails: cancel() rejects with the refusal, and the read’s failure is reported', async () => {
    const { server, tasks, errors } = await setup({}, { retry: { retries: 0 } });
    creating(server, { taskId: 'refused-unread', ttl: 3_600_000, pollInterval: 60_000 });
    refusingThenReading(server, rpcError(-32600, 'task cannot be cancelled'), () => {
      throw rpcError(-32603, 'store unavailable');
    });
    const handle = await tasks.callToolAsTask('job');
    const error = await rejection(handle.cancel());
    expect(error).toMatchObject({ name: 'TaskRpcError', code: -32600, method: 'tasks/cancel' });
    expect(errors.map((e) => (e as TaskRpcError).code)).toContain(-32603);
    expect(handle.settled).toBe(false);
  });
});

/** How each server words an unknown task id, and its code (D12; rmcp's resource-not-found, D19). */
const NOT_FOUND: ReadonlyArray<readonly [string, (taskId: string) => string, number]> = [
  ['TypeScript', () => 'Failed to retrieve task: Task not found', -32602],
  ['Python', (taskId) => `Task not found: ${taskId}`, -32602],
  ['mcp-go', () => 'task not found', -32602],
  ['Rust rmcp', (taskId) => `task not found: ${taskId}`, -32002],
];

/**
 * Every tasks/get, tasks/result and tasks/cancel for a task the board lacks answers `code` with
 * `words`; returns the tasks/get handler.
 */
function notFoundIn(
  server: ScriptedServer,
  words: (taskId: string) => string,
  code: number,
): (params: Json, ctx: HandlerContext) => unknown {
  const board = server.tasks.handlers;
  const handler = (method: 'tasks/get' | 'tasks/result' | 'tasks/cancel') => (params: Json, ctx: HandlerContext) => {
    const taskId = String(params.taskId);
    try {
      server.tasks.get(taskId);
    } catch {
      throw rpcError(code, words(taskId));
    }
    return board[method]!(params, ctx);
  };
  for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'] as const) server.on(method, handler(method));
  return handler('tasks/get');
}

/** A Python-style task id (D3): a session scope and a uuid, joined by a colon. */
const PYTHON_ID = '0123456789abcdef0123456789abcdef:6f1c2e0a-8d4b-4e9a-9c1f-2b7d5e3a4c10';

describe('a task id the server does not know: -32602 (rmcp: -32002) in each server’s words (D12, D19)', () => {
  for (const [name, words, code] of NOT_FOUND) {
    it(`${name}: resuming an unknown task ends with TaskNotFoundError after one tasks/get, with the id kept out of every message (D12)`, async () => {
      const { server, tasks, clock, errors } = await setup();
      notFoundIn(server, words, code);
      const seen = outcomes(tasks);
      const handle = tasks.resume(PYTHON_ID, { toolName: 'job' });
      const updates = handle.updates();
      const failure = rejection(handle.result());
      await clock.advance(0);
      const error = (await failure) as TaskNotFoundError;
      expect(error).toBeInstanceOf(TaskNotFoundError);
      expect(error.taskId).toBe(PYTHON_ID);
      // The server's -32602 is the cause, not a separate failure.
      expect(error.cause).toBeInstanceOf(TaskRpcError);
      expect((error.cause as TaskRpcError).code).toBe(code);
      // Task ids are secrets: no message along the chain repeats it, whatever the server wrote.
      for (const text of messages(error)) expect(text).not.toContain(PYTHON_ID);
      expect(await rejection(updates.next())).toBeInstanceOf(TaskNotFoundError);
      await clock.advance(10_000);
      expect(server.count('tasks/get')).toBe(1); // not retried: -32602 is an answer
      expect(server.count('tasks/result') + server.count('tasks/cancel')).toBe(0);
      expect(seen).toEqual({ settled: ['expired'], events: ['expired'] });
      expect(errors).toEqual([]);
    });

    it(`${name}: a tracked task that vanishes before its ttl ends with TaskNotFoundError at the next poll, not a TaskRpcError (D12)`, async () => {
      const { server, tasks, clock, errors } = await setup();
      notFoundIn(server, words, code);
      creating(server, { taskId: 'vanishing', ttl: 3_600_000, pollInterval: 1_000 });
      const handle = await tasks.callToolAsTask('job');
      const failure = rejection(handle.result());
      await clock.advance(1_000);
      expect(server.count('tasks/get')).toBe(1);
      server.tasks.delete('vanishing');
      await clock.advance(1_000);
      const error = (await failure) as TaskNotFoundError;
      expect(error).toBeInstanceOf(TaskNotFoundError);
      expect(error.task).toMatchObject({ taskId: 'vanishing', status: 'working' });
      await clock.advance(10_000);
      expect(server.count('tasks/get')).toBe(2);
      expect(errors).toEqual([]);
      expect(tasks.active).toBe(0);
    });

    it(`${name}: cancel() of a task the server already forgot does not claim it was cancelled: cancel() and result() reject TaskNotFoundError (D12)`, async () => {
      const { server, tasks, clock, errors } = await setup();
      const get = notFoundIn(server, words, code);
      creating(server, { taskId: 'forgotten', ttl: 3_600_000 });
      const seen = outcomes(tasks);
      const handle = await tasks.callToolAsTask('job');
      // Forgotten right after the last look, so the cancel meets the unknown id.
      endsAfterTheLook(server, () => server.tasks.delete('forgotten'), get);
      // Never an invented `cancelled`, nor the stale `working` snapshot of a task that is gone: the
      // same error result() gives.
      const error = await rejection(handle.cancel());
      expect(error).toBeInstanceOf(TaskNotFoundError);
      expect(await rejection(handle.result())).toBe(error);
      expect(handle.task?.status).toBe('working');
      await clock.advance(10_000);
      expect(server.count('tasks/cancel')).toBe(1);
      expect(server.count('tasks/get')).toBe(2); // the last look, and the one re-read after the -32602
      expect(seen).toEqual({ settled: ['expired'], events: ['expired'] });
      expect(errors).toEqual([]);
    });
  }
});

describe('a required tool called without `task` (D15)', () => {
  // A real server answers this only to a client that sends the call plainly. This library does so
  // only when the server does not declare tasks.requests.tools.call ([R6]); here a gateway that
  // passes no task capabilities on stands in front of each real server.
  const NO_TASK_CAPS = { capabilities: { tools: {} } };

  it('with tasks.requests.tools.call declared a required tool always goes out with `task`, so no server gets the chance to refuse it (D15)', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'req' });
    const handle = await tasks.callToolAsTask('job', { n: 1 });
    expect(handle.kind).toBe('task');
    expect(server.params('tools/call')).toEqual([
      { name: 'job', arguments: { n: 1 }, task: expect.any(Object) as unknown },
    ]);
  });

  it.each([
    ['TypeScript', "MCP error -32601: Tool job requires task augmentation (taskSupport: 'required')"],
    ['Python', 'This tool requires task-augmented invocation'],
  ])(
    '%s shape: the isError refusal makes result() reject TaskFailedError carrying the server’s words and payload (D15)',
    async (_name, words) => {
      const { server, tasks } = await setup(NO_TASK_CAPS);
      const refusal = { isError: true, content: [{ type: 'text', text: words }] };
      server.on('tools/call', () => refusal);
      const handle = await tasks.callToolAsTask('job');
      expect(handle.kind).toBe('immediate');
      const error = (await rejection(handle.result())) as TaskFailedError;
      expect(error).toBeInstanceOf(TaskFailedError);
      expect(error.message).toContain(words);
      expect(error.result).toMatchObject(refusal);
      expect(server.count('tools/call')).toBe(1);
      expect(server.params('tools/call')[0]).not.toHaveProperty('task');
      expect(server.count('tasks/get') + server.count('tasks/result')).toBe(0);
    },
  );

  it('mcp-go shape: the JSON-RPC -32601 rejects callToolAsTask with TaskRpcError (code -32601, the server’s words), sent once (D15)', async () => {
    const { server, tasks, clock } = await setup(NO_TASK_CAPS);
    server.on('tools/call', () => {
      throw rpcError(-32601, 'tool job requires task augmentation');
    });
    const error = await rejection(tasks.callToolAsTask('job'));
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ code: -32601, method: 'tools/call', transient: false });
    expect((error as TaskRpcError).message).toContain('tool job requires task augmentation');
    await clock.advance(10_000);
    expect(server.count('tools/call')).toBe(1);
    expect(tasks.active).toBe(0);
  });
});

it('an error message the server SDK prefixed twice ("MCP error -32602: MCP error -32602: …") is read without the prefixes ([S17])', async () => {
  const { server, tasks } = await setup();
  server.on('tools/call', () => {
    throw rpcError(-32602, 'MCP error -32602: MCP error -32602: Invalid arguments for tool job');
  });
  const error = await rejection(tasks.callToolAsTask('job'));
  expect(error).toBeInstanceOf(TaskRpcError);
  expect(error).toMatchObject({ code: -32602 });
  expect((error as Error).message).toContain('Invalid arguments for tool job');
  expect((error as Error).message).not.toContain('MCP error');
});

describe('an optional tool called without `task` (D17)', () => {
  it('an optional tool goes out as a task: the result is in hand the moment the server reports completion, with no polling delay (D17)', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'opt', pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('slow');
    expect(handle.kind).toBe('task');
    expect(server.params('tools/call')[0]).toHaveProperty('task');
    let resolvedAt: number | undefined;
    const result = handle.result().then((value) => {
      resolvedAt = clock.now();
      return value;
    });
    await clock.advance(300);
    server.tasks.finish('opt', 'completed', { result: textResult('quick') }, {}, true);
    await clock.advance(0);
    expect((await within(result)).content).toEqual([{ type: 'text', text: 'quick' }]);
    expect(resolvedAt).toBe(start + 300);
    expect(server.count('tasks/get')).toBe(0);
  });

  it('called plainly on a TypeScript-style server, which runs it as an internal task: that task’s notifications are ignored and the plain answer a poll interval later is the result (D17)', async () => {
    // Tasks declared, but not for tools/call: the library calls plainly ([R6]).
    const { server, tasks, clock, errors } = await setup({
      capabilities: { tools: {}, tasks: { list: {}, cancel: {} } },
    });
    const seen = outcomes(tasks);
    let call: HandlerContext | undefined;
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { task: undefined }); // a plain call ([R6])
      call = ctx;
      // The McpServer creates a task of its own and polls it once a second before answering.
      server.tasks.create({ taskId: 'internal', statusMessage: 'working on it' });
      server.tasks.update('internal', {}, true);
      return NO_REPLY;
    });
    let handle: TaskHandle | undefined;
    const calling = tasks.callToolAsTask('slow').then((h) => (handle = h));
    await clock.advance(500);
    server.tasks.finish('internal', 'completed', { result: textResult('slow done') }, {}, true);
    await clock.advance(500);
    expect(handle).toBeUndefined();
    call!.reply(textResult('slow done'));
    await within(calling);
    expect(server.sent.filter((message) => message.method === 'notifications/tasks/status')).toHaveLength(2);
    expect(handle!.kind).toBe('immediate');
    expect((await within(handle!.result())).content).toEqual([{ type: 'text', text: 'slow done' }]);
    expect(server.params('tools/call')[0]).not.toHaveProperty('task');
    await clock.advance(10_000);
    expect(server.count('tasks/get') + server.count('tasks/result') + server.count('tasks/cancel')).toBe(0);
    expect(tasks.active).toBe(0);
    expect(tasks.handles()).toEqual([]);
    expect(seen).toEqual({ settled: [], events: [] });
    expect(errors).toEqual([]);
  });
});

describe('capabilities as each server declares them (D18)', () => {
  it.each([
    ['TypeScript', { tools: { listChanged: true }, tasks: FULL_TASK_CAPS }],
    ['Python', { experimental: {}, tools: { listChanged: false }, tasks: FULL_TASK_CAPS }],
    ['mcp-go', { tools: { listChanged: true }, tasks: FULL_TASK_CAPS }],
  ])(
    '%s: tasks, tasks/cancel and tasks/list are all used, whatever else is declared (D18)',
    async (_name, capabilities) => {
      const { server, tasks, errors } = await setup({ capabilities });
      creating(server, { taskId: 'caps' });
      expect(await within(tasks.tools())).toEqual([
        { name: 'slow', taskSupport: 'optional', inputSchema: { type: 'object' } },
        { name: 'job', taskSupport: 'required', inputSchema: { type: 'object' } },
      ]);
      const handle = await tasks.callToolAsTask('job');
      expect(handle.kind).toBe('task');
      expect(server.params('tools/call')[0]).toHaveProperty('task');
      const listed: string[] = [];
      for await (const task of tasks.list()) listed.push(`${task.taskId}:${task.status}`);
      expect(listed).toEqual(['caps:working']);
      expect(await within(handle.cancel())).toMatchObject({ taskId: 'caps', status: 'cancelled' });
      expect(await rejection(handle.result())).toBeInstanceOf(TaskCancelledError);
      expect(server.count('tasks/list')).toBe(1);
      expect(server.count('tasks/cancel')).toBe(1);
      expect(errors).toEqual([]);
    },
  );
});

describe('a ttl shorter than the work: the task is deleted while it runs (D9)', () => {
  it.each([
    ['TypeScript', 'Failed to retrieve task: Task not found'],
    ['mcp-go', 'task has expired'],
  ])(
    '%s shape: deleted at creation + ttl, the next poll’s -32602 ("%s") ends the task with TaskExpiredError after one expiring warning (D9)',
    async (_name, words) => {
      const { server, tasks, clock, start, errors } = await setup();
      const seen = outcomes(tasks);
      server.on('tools/call', (params) => {
        server.assertRequest('tools/call', params, { task: { ttl: 60_000 } });
        const created = server.tasks.createResult({ taskId: 'short-ttl', ttl: 5_000, pollInterval: 1_000 });
        clock.setTimeout(() => server.tasks.delete('short-ttl'), 5_000);
        return created;
      });
      const board = server.tasks.handlers;
      for (const method of ['tasks/get', 'tasks/result'] as const) {
        server.on(method, (params, ctx) => {
          try {
            server.tasks.get(String(params.taskId));
          } catch {
            throw rpcError(-32602, words);
          }
          return board[method]!(params, ctx);
        });
      }
      const expiring: number[] = [];
      tasks.on('expiring', (_metrics, expiry) => expiring.push(expiry.expiresAt));
      const handle = await tasks.callToolAsTask('job', {}, { ttlMs: 60_000 });
      expect(handle.task?.ttl).toBe(5_000); // the server's ttl, not the one asked for
      const failure = rejection(handle.result());
      await clock.advance(6_000);
      const error = (await failure) as TaskExpiredError;
      expect(error).toBeInstanceOf(TaskExpiredError);
      expect(error.task).toMatchObject({ taskId: 'short-ttl', status: 'working' });
      expect((error.cause as TaskRpcError).code).toBe(-32602);
      expect(expiring).toEqual([start + 5_000]);
      await clock.advance(60_000);
      expect(server.count('tasks/get')).toBe(5); // up to the poll that found it gone; none after
      expect(server.count('tasks/result')).toBe(0);
      expect(seen).toEqual({ settled: ['expired'], events: ['expired'] });
      expect(errors).toEqual([]);
      expect(tasks.active).toBe(0);
    },
  );

  it('Python shape: the server dies at the ttl (its stdio process exits): a lost connection, so tracking pauses and the call’s deadline ends it with TaskTimeoutError saying so (D9)', async () => {
    const { server, tasks, clock, errors } = await setup();
    server.on('tools/call', () => {
      const created = server.tasks.createResult({ taskId: 'py-dies', ttl: 5_000, pollInterval: 500 });
      clock.setTimeout(() => void server.close(), 5_000);
      return created;
    });
    const lost: string[] = [];
    tasks.on('connectionLost', () => lost.push('lost'));
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 20_000 });
    const failure = rejection(handle.result());
    await clock.advance(5_000);
    await flush();
    expect(lost).toEqual(['lost']);
    const gets = server.count('tasks/get');
    await clock.advance(10_000);
    expect(handle.settled).toBe(false); // paused, not failing poll after poll
    expect(server.count('tasks/get')).toBe(gets);
    await clock.advance(5_000);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.connectionLost).toBe(true);
    expect(error.message).toContain('connection to the server was lost');
    expect(errors.every((e) => e instanceof TaskError)).toBe(true);
  });
});

describe('input inside a task, as each server delivers it (D14)', () => {
  const RELATED = 'io.modelcontextprotocol/related-task';
  const QUESTION = {
    message: 'Proceed?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  };
  const WITH_ELICITATION = { clientOptions: { capabilities: { elicitation: {} } } };

  it('Python shape: input_required set without a notification is found by a poll; the question comes only during tasks/result, with a string id "task-<taskId>-1", and the answer is tagged (D14, [R31])', async () => {
    const { server, tasks, clock, errors } = await setup(WITH_ELICITATION);
    creating(server, { taskId: PYTHON_ID, pollInterval: 500 });
    let answer: Json | undefined;
    server.on('tasks/result', async (params) => {
      const taskId = String(params.taskId);
      if (status(server, taskId) === 'input_required') {
        // Queued by task.elicit() and delivered now, tagged, under Python's own request id.
        const id = `task-${taskId}-1`;
        server.send({
          jsonrpc: '2.0',
          id,
          method: 'elicitation/create',
          params: { ...QUESTION, _meta: { [RELATED]: { taskId } } },
        });
        while (answer === undefined) {
          await clock.advance(0);
          answer = server.log.find((entry) => entry.kind === 'response' && entry.id === id)?.message;
        }
        server.tasks.update(taskId, { status: 'working' }); // back to working, no notification
        server.tasks.finish(taskId, 'completed', { result: textResult('confirmed') }, {}, true);
      }
      return server.tasks.handlers['tasks/result']!(params, {} as HandlerContext);
    });
    const asked: Array<string | undefined> = [];
    const handle = await tasks.callToolAsTask('job', {}, acceptingInto(asked));
    await clock.advance(200);
    server.tasks.update(PYTHON_ID, { status: 'input_required' }); // silently (D8)
    expect(server.count('tasks/result')).toBe(0);
    await clock.advance(300); // the poll sees it
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'confirmed' }]);
    expect(asked).toEqual([PYTHON_ID]);
    expect(answer).toMatchObject({
      id: `task-${PYTHON_ID}-1`,
      result: { action: 'accept', content: { ok: true }, _meta: { [RELATED]: { taskId: PYTHON_ID } } },
    });
    expect(server.count('tasks/result')).toBe(1);
    expect(errors).toEqual([]);
  });

  it('mcp-go shape: an untagged question with an integer id while the task stays working is answered by the call’s callback, under the same integer id, untagged (D14, [R31])', async () => {
    const { server, tasks, clock, errors } = await setup(WITH_ELICITATION);
    creating(server, { taskId: 'go-ask', pollInterval: undefined });
    const asked: Array<string | undefined> = [];
    const handle = await tasks.callToolAsTask('job', {}, acceptingInto(asked));
    server.send({ jsonrpc: '2.0', id: 7, method: 'elicitation/create', params: QUESTION });
    let reply: LoggedMessage | undefined;
    for (let i = 0; i < 50 && reply === undefined; i += 1) {
      await clock.advance(0);
      reply = server.log.find((entry) => entry.kind === 'response' && entry.id === 7);
    }
    expect(reply?.message).toMatchObject({ id: 7, result: { action: 'accept', content: { ok: true } } });
    expect(typeof reply?.message.id).toBe('number');
    expect((reply?.message.result as Json)._meta?.[RELATED as never]).toBeUndefined();
    expect(asked).toEqual(['go-ask']);
    expect(handle.task?.status).toBe('working');
    server.tasks.finish('go-ask', 'completed', { result: textResult('went on') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'went on' }]);
    expect(errors).toEqual([]);
  });
});

describe('tasks/list as each server pages it (D13)', () => {
  /** The board's tasks, sorted by id, in pages of `size` behind cursors made by `cursor`. */
  function paging(server: ScriptedServer, size: number, cursor: (offset: number) => string, extra: Json = {}) {
    server.on('tasks/list', (params) => {
      const all = server.tasks.handlers['tasks/list']!(params, {} as HandlerContext) as { tasks: Json[] };
      const sorted = all.tasks.sort((a, b) => String(a.taskId).localeCompare(String(b.taskId)));
      let offset = 0;
      while (typeof params.cursor === 'string' && cursor(offset) !== params.cursor) offset += size;
      const page = sorted.slice(offset, offset + size);
      return offset + size < sorted.length
        ? { tasks: page, nextCursor: cursor(offset + size), ...extra }
        : { tasks: page, ...extra };
    });
  }

  it.each([
    // TypeScript: pages of 10 and `_meta: {}`; mcp-go with WithPaginationLimit: base64 cursors
    // (with `/` and `=` padding) passed back byte for byte ([R23]); Python: one page.
    ['TypeScript', 10, (offset: number) => `ts-${offset}`, { _meta: {} }, 3],
    ['mcp-go', 4, (offset: number) => `${Buffer.from(`{"o":${offset}}??>`).toString('base64')}`, {}, 7],
    ['Python', 1_000, (offset: number) => `unused-${offset}`, {}, 1],
  ])('%s shape: every task is listed once, across all pages (D13)', async (_name, size, cursor, extra, pages) => {
    const { server, tasks, errors } = await setup();
    for (let i = 0; i < 25; i += 1)
      server.tasks.create({ taskId: `${PYTHON_ID.slice(0, 33)}${String(i).padStart(2, '0')}` });
    paging(server, size, cursor, extra);
    const listed: string[] = [];
    for await (const task of tasks.list()) listed.push(task.taskId);
    expect(listed).toHaveLength(25);
    expect(new Set(listed).size).toBe(25);
    expect(server.count('tasks/list')).toBe(pages);
    expect(
      server
        .params('tasks/list')
        .slice(1)
        .map((p) => p.cursor),
    ).toEqual(Array.from({ length: pages - 1 }, (_, i) => cursor((i + 1) * size)));
    expect(errors).toEqual([]);
  });

  it('mcp-go with no tasks: `tasks: null` is an empty listing, not an error (D13)', async () => {
    const { server, tasks, errors } = await setup();
    server.on('tasks/list', () => ({ tasks: null }));
    const listed: string[] = [];
    for await (const task of tasks.list()) listed.push(task.taskId);
    expect(listed).toEqual([]);
    expect(await within(tasks.listPage())).toEqual({ tasks: [] });
    expect(errors).toEqual([]);
  });
});
