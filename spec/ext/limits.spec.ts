/**
 * What the tasks extension wire lacks, and how its errors read, through the public API:
 * - the server decides the ttl: the `ttlMs` option is ignored (no error, nothing sent, [E13]);
 * - `ttlMs` is a backstop: a task still running when it ran out, counted on our clock from the
 *   creation reply, settles with `TaskExpiredError` after one last read (which delivers a result
 *   that has just come); a ttlMs of 0 arms nothing;
 * - there is no `tasks/list`: `list()` and `listPage()` fail with `TaskNotSupportedError`;
 * - there is no progress on tasks ([E10]);
 * - `-32021` (and the drafts' `-32003`) when its data names the extension ([E11], [E29]), `-32022` ([E12]), `-32020` ([E19]) and `-32602` on a task request
 *   each give a typed error whose message says what the code means; a `-32021` naming another
 *   capability says which.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  TaskExpiredError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskRpcError,
  type TaskError,
  type TaskProgress,
} from '../../lib/index.js';
import { flush, rejection } from '../helpers.js';
import {
  ErrorCode,
  ExtServer,
  missingExtension,
  NO_REPLY,
  rpcError,
  taskTool,
  textResult,
  type ExtServerOptions,
} from '../support/ext-server/index.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import { closeRigs, extRig, sdkV2Client, type ExtRig } from './support.js';

afterEach(closeRigs);

function manual(options: ExtServerOptions = {}): ExtServerOptions {
  return {
    notifications: 'off',
    pollIntervalMs: 1_000,
    ...options,
    tools: [taskTool('manual', { advance: 'manual' }), ...(options.tools ?? [])],
  };
}

async function settle(rig: ExtRig, handle: { readonly settled: boolean }, step = 1_000, max = 120_000): Promise<void> {
  for (let spent = 0; !handle.settled && spent < max; spent += step) await rig.clock.advance(step);
}

/** A task of a 5 s ttl, polled once a minute, 100 ms before its ttl; `result` holds its outcome or error. */
async function nearTtl() {
  const rig = await extRig({ server: manual({ ttlMs: 5_000, pollIntervalMs: 60_000 }) });
  const handle = await rig.tasks.callToolAsTask('manual');
  const result = handle.result().catch((error: unknown) => error);
  await rig.clock.advance(4_900);
  return { rig, handle, result };
}

describe('the ttl is the server’s ([E13])', () => {
  it('ignores the ttlMs option, of the client and of the call: no error, nothing sent', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 60_000 }), client: { ttlMs: 4_321 } });
    const handle = await rig.tasks.callToolAsTask('manual', {}, { ttlMs: 1_234 });
    expect(handle.kind).toBe('task');
    expect(handle.task?.ttl).toBe(60_000);
    const sent = JSON.stringify(rig.server.params('tools/call'));
    expect(sent).not.toMatch(/ttl|1234|4321/i);
  });

  it('gives a task still running when ttlMs ran out up as TaskExpiredError, after an `expiring` warning', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 5_000 }) });
    const events: string[] = [];
    rig.tasks.on('expiring', (_metrics, expiry) =>
      events.push(`expiring at +${expiry.expiresAt - start} (${expiry.remainingMs} left)`),
    );
    rig.tasks.on('expired', (metrics) => events.push(`expired: ${metrics.error.name}`));
    const start = rig.clock.now();
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(4_999);
    expect(handle.settled).toBe(false);
    await rig.clock.advance(1);
    const error = await result;
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect(error).toMatchObject({ taskId: handle.taskId, task: { status: 'working', ttl: 5_000 } });
    expect(events).toEqual(['expiring at +5000 (1000 left)', 'expired: TaskExpiredError']);
    const polls = rig.server.count('tasks/get');
    await rig.clock.advance(10_000);
    expect(rig.server.count('tasks/get'), 'nothing is polled after').toBe(polls);
    // The server still has it: the backstop is the client's own reading of the ttl.
    expect(rig.server.tasks.detailed(handle.taskId!).status).toBe('working');
  });

  it('says in the TaskExpiredError of the backstop that the ttl ran out, without claiming the server dropped the task', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 5_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(5_000);
    const error = (await result) as Error;
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect(rig.server.tasks.detailed(handle.taskId!).status).toBe('working');
    expect(error.message).not.toMatch(/server dropped it/);
  });

  it('a task whose cancel the server accepted but did not act on (cancel is only a request) and still runs at the ttl: TaskExpiredError, not a cancel whose task was dropped', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 5_000, cancel: 'ignore' }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(500);
    await expect(handle.cancel()).resolves.toMatchObject({ status: 'working' });
    expect(rig.server.count('tasks/cancel')).toBe(1);
    await settle(rig, handle, 500);
    const error = (await result) as Error;
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect(error.message).not.toMatch(/dropped/);
    expect(rig.server.tasks.detailed(handle.taskId!).status).toBe('working');
  });

  it('takes one last look at the ttl: a result that has just come is delivered, not lost', async () => {
    const { rig, handle, result } = await nearTtl();
    // Completed between polls (no notifications): only the last look at the ttl can see it.
    rig.server.tasks.complete(handle.taskId!, textResult('just in time'));
    const polls = rig.server.count('tasks/get');
    await rig.clock.advance(100);
    expect(rig.server.count('tasks/get')).toBe(polls + 1);
    expect(await result).toMatchObject({ content: textResult('just in time').content });
  });

  it('the last look sees a ttl the server extended: the task is kept, and ends when the server ends it', async () => {
    const { rig, handle, result } = await nearTtl();
    rig.server.tasks.update(handle.taskId!, { ttlMs: 20_000 });
    await rig.clock.advance(100);
    expect(handle.settled).toBe(false);
    expect(handle.task?.ttl).toBe(20_000);
    rig.server.tasks.complete(handle.taskId!, textResult('later'));
    await rig.clock.advance(60_000);
    expect(await result).toMatchObject({ content: textResult('later').content });
  });

  it('a poll beside the last look that sees the extended ttl first: neither expired nor reported vanished', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 5_000, pollIntervalMs: 1_000 }) });
    const start = rig.clock.now();
    const answer = builtinMethods(rig.server)['tasks/get']!;
    let release: (() => void) | undefined;
    let held = 0;
    rig.server.on('tasks/get', async (params, ctx) => {
      // The first read at the ttl (the last look) waits; the poll beside it is answered.
      if (rig.clock.now() >= start + 5_000 && held === 0) {
        held += 1;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return answer(params, ctx);
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    const events: string[] = [];
    rig.tasks.on('expired', () => events.push('expired'));
    await rig.clock.advance(4_500);
    rig.server.tasks.update(handle.taskId!, { ttlMs: 20_000 });
    await rig.clock.advance(1_000);
    expect(held).toBe(1);
    release?.();
    await rig.clock.advance(0);
    expect(handle.settled).toBe(false);
    expect(events).toEqual([]);
  });

  it('a connection lost when the ttl elapses: the last look waits for the new connection, which brings the result', async () => {
    const { rig, handle, result } = await nearTtl();
    await rig.tasks.client.transport?.close();
    await rig.clock.advance(1_000);
    expect(handle.settled).toBe(false);
    rig.server.tasks.complete(handle.taskId!, textResult('after the blip'));
    rig.tasks.reconnect(await sdkV2Client(rig.server));
    await rig.clock.advance(100);
    expect(await result).toMatchObject({ content: textResult('after the blip').content });
  });

  it('reconnect(client) to a connection on the other task wire, with tasks tracked, is refused: a task id names a task on one wire, and the tasks stay on theirs', async () => {
    const rig = await extRig({ server: manual({ legacy: true }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const legacy = await sdkV2Client(rig.server, {}, 'legacy');
    expect(() => rig.tasks.reconnect(legacy)).toThrow(TaskOptionError);
    expect(() => rig.tasks.reconnect(legacy)).toThrow(/2025-11-25.*io\.modelcontextprotocol\/tasks/);
    expect(rig.tasks.wire).toBe('io.modelcontextprotocol/tasks');
    expect(handle.toJSON()?.wire).toBe('io.modelcontextprotocol/tasks');
    rig.server.tasks.complete(handle.taskId!, textResult('still here'));
    await settle(rig, handle);
    expect(await handle.result()).toMatchObject({ content: textResult('still here').content });
  });

  it('reconnect(client) to a 2025-11-25 connection whose SDK client cannot take the client-level callbacks (the extension took them, [E35]) is refused, as the constructor refuses them there', async () => {
    const server = new ExtServer(manual({ legacy: true }));
    const modern = await sdkV2Client(server, {});
    const tasks = new TaskClient(modern, { onElicitation: () => ({ action: 'decline' }) });
    try {
      expect(tasks.wire).toBe('io.modelcontextprotocol/tasks');
      const legacy = await sdkV2Client(server, {}, 'legacy');
      expect(() => new TaskClient(legacy, { onElicitation: () => ({ action: 'decline' }) })).toThrow(
        TaskNotSupportedError,
      );
      const refusal = (() => {
        try {
          tasks.reconnect(legacy);
          return undefined;
        } catch (error) {
          return error;
        }
      })();
      expect(refusal).toBeInstanceOf(TaskOptionError);
      expect((refusal as Error).message).toMatch(/did not declare the "elicitation" capability/);
      expect(tasks.wire).toBe('io.modelcontextprotocol/tasks');
      const declared = await sdkV2Client(server, { elicitation: {} }, 'legacy');
      tasks.reconnect(declared);
      expect(tasks.wire).toBe('2025-11-25');
    } finally {
      await tasks.close();
    }
  });

  it('a task the server dropped by the ttl is expired, and the error says the server dropped it', async () => {
    const { rig, handle, result } = await nearTtl();
    rig.server.tasks.delete(handle.taskId!);
    await rig.clock.advance(100);
    const error = (await result) as Error;
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect(error.message).toMatch(/server dropped it/);
  });

  it('a ttlMs of 0 (no conformant server sends one; some mean "unlimited" by it) neither warns nor gives the task up', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 0 }) });
    const events: string[] = [];
    rig.tasks.on('expiring', () => events.push('expiring'));
    rig.tasks.on('expired', () => events.push('expired'));
    const handle = await rig.tasks.callToolAsTask('manual');
    expect(handle.task?.ttl).toBe(0);
    const result = handle.result();
    await rig.clock.advance(30_000);
    expect(handle.settled).toBe(false);
    rig.server.tasks.complete(handle.taskId!, textResult('fine'));
    await rig.clock.advance(2_000);
    expect((await result).content).toEqual(textResult('fine').content);
    expect(events).toEqual([]);
  });

  it('follows a ttlMs the server changes during the task', async () => {
    const tool = taskTool('extended', { ttlMs: 5_000, advance: 'poll', steps: [{ ttlMs: 20_000 }] });
    const rig = await extRig({ server: manual({ tools: [tool] }) });
    const handle = await rig.tasks.callToolAsTask('extended');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(10_000);
    expect(handle.settled).toBe(false);
    expect(handle.task?.ttl).toBe(20_000);
    await rig.clock.advance(10_000);
    expect(await result).toBeInstanceOf(TaskExpiredError);
  });

  it('never gives up a task whose ttlMs is null', async () => {
    const rig = await extRig({ server: manual({ ttlMs: null, pollIntervalMs: 60_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(6 * 3_600_000);
    expect(handle.settled).toBe(false);
    rig.server.tasks.complete(handle.taskId!, textResult('eventually'));
    const result = handle.result();
    await rig.clock.advance(60_000);
    expect((await result).content).toEqual(textResult('eventually').content);
  });
});

describe('no tasks/list', () => {
  it('list() and listPage() fail with TaskNotSupportedError (feature "list"), sending nothing', async () => {
    const rig = await extRig();
    const page = await rejection(rig.tasks.listPage());
    expect(page).toBeInstanceOf(TaskNotSupportedError);
    expect(page).toMatchObject({ feature: 'list' });
    const all = await rejection(rig.tasks.list().next());
    expect(all).toBeInstanceOf(TaskNotSupportedError);
    expect(rig.server.count('tasks/list')).toBe(0);
    // What a UI can list instead: the handles this client tracks.
    const handle = await rig.tasks.callToolAsTask('slow_compute');
    expect(rig.tasks.handles()).toEqual([handle]);
  });

  it('tools() says the server decides per call', async () => {
    const rig = await extRig();
    const tools = await rig.tasks.tools();
    expect(tools.find((t) => t.name === 'slow_compute')).toMatchObject({ taskSupport: 'server-decides' });
    expect(new Set(tools.map((t) => t.taskSupport))).toEqual(new Set(['server-decides']));
  });
});

describe('no progress on tasks ([E10])', () => {
  it('accepts onProgress and never calls it for a task; no progress events', async () => {
    const rig = await extRig();
    const seen: TaskProgress[] = [];
    const events: unknown[] = [];
    rig.tasks.on('progress', (_metrics, progress) => events.push(progress));
    const handle = await rig.tasks.callToolAsTask(
      'slow_compute',
      { polls: 2 },
      { onProgress: (progress) => seen.push(progress) },
    );
    const token = (rig.server.params('tools/call')[0]?._meta as Record<string, unknown>).progressToken;
    rig.server.notify('notifications/progress', { progressToken: token, progress: 1, total: 2 });
    const result = handle.result();
    await settle(rig, handle);
    await result;
    expect(seen).toEqual([]);
    expect(events).toEqual([]);
  });

  it('delivers the progress a server sends for the token while the tools/call is still open (before any task exists)', async () => {
    const rig = await extRig();
    rig.server.on('tools/call', (params, ctx) => {
      const token = (params._meta as Record<string, unknown>).progressToken;
      ctx.server.notify(
        'notifications/progress',
        { progressToken: token, progress: 1, total: 2, message: 'half' },
        ctx.link,
      );
      setTimeout(() => ctx.reply({ resultType: 'complete', ...textResult('plain') }), 5);
      return NO_REPLY;
    });
    const seen: TaskProgress[] = [];
    const handle = await rig.tasks.callToolAsTask('slow_plain', {}, { onProgress: (progress) => seen.push(progress) });
    expect(handle.kind).toBe('immediate');
    await flush();
    expect(seen).toEqual([{ progress: 1, total: 2, message: 'half' }]);
  });
});

describe('errors say what they mean', () => {
  /** The rejection of a call whose tools/call the server answers with `error`. */
  async function callFailing(error: { code: number; message: string; data?: unknown }): Promise<TaskRpcError> {
    const rig = await extRig();
    rig.server.on('tools/call', () => {
      throw rpcError(error.code, error.message, error.data);
    });
    const failure = await rejection(rig.tasks.callToolAsTask('slow_compute'));
    expect(failure).toBeInstanceOf(TaskRpcError);
    return failure as TaskRpcError;
  }

  it('-32021: the request did not declare the extension ([E11])', async () => {
    const data = { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
    const error = await callFailing({
      code: ErrorCode.MissingRequiredClientCapability,
      message: 'Missing required client capability',
      data,
    });
    expect(error).toMatchObject({ code: -32021, method: 'tools/call', data, transient: false });
    expect(error.message).toMatch(
      /Missing required client capability.*did not declare the io\.modelcontextprotocol\/tasks extension/,
    );
  });

  it('-32021 naming another capability (elicitation) is the server’s error naming it, not a missing extension ([E11])', async () => {
    // -32021 is generic: data.requiredCapabilities says which client capability is missing.
    const data = { requiredCapabilities: { elicitation: {} } };
    const error = await callFailing({
      code: ErrorCode.MissingRequiredClientCapability,
      message: 'Missing required client capability',
      data,
    });
    expect(error).toMatchObject({ code: -32021, method: 'tools/call', data, transient: false, kind: 'server' });
    expect(error.message).toBe(
      'tools/call failed: Missing required client capability (the server requires a client capability the request did not declare: elicitation)',
    );
    expect(error.message).not.toMatch(/tasks extension/);
    // Another extension, several capabilities, a name from the server clipped; none named at all.
    const other = await callFailing({
      code: -32021,
      message: 'Missing required client capability',
      data: {
        requiredCapabilities: { sampling: {}, extensions: { 'com.example/other': {} }, ['x'.repeat(100)]: {} },
      },
    });
    expect(other.message).toMatch(
      new RegExp(`did not declare: sampling, extension com\\.example/other, ${'x'.repeat(63)}…\\)$`),
    );
    const unnamed = await callFailing({ code: -32021, message: 'Missing required client capability' });
    expect(unnamed.message).toMatch(/did not declare \(it did not say which\)\)$/);
    expect(unnamed.message).not.toMatch(/tasks extension/);
  });

  it("-32003 naming the extension in its data (the drafts' code) reads as -32021 does ([E11])", async () => {
    const data = { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
    const error = await callFailing({ code: -32003, message: 'Missing required client capability', data });
    expect(error).toMatchObject({ code: -32003, data, transient: false });
    expect(error.message).toMatch(
      /did not declare the io\.modelcontextprotocol\/tasks extension \(the drafts' code for -32021\)/,
    );
  });

  it("-32003 without that data is the server's own error, not explained as a missing extension ([E29])", async () => {
    const error = await callFailing({ code: -32003, message: 'Forbidden: tenant quota exceeded' });
    expect(error).toMatchObject({ code: -32003, transient: false });
    expect(error.message).toMatch(/Forbidden: tenant quota exceeded/);
    expect(error.message).not.toMatch(/extension/);
    // Another extension named in the data is not this one either.
    const other = await callFailing({
      code: -32003,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { 'com.example/other': {} } } },
    });
    expect(other.message).not.toMatch(/tasks extension/);
  });

  it('-32022: the server does not support the protocol version ([E12])', async () => {
    const data = { supported: ['2027-01-01'], requested: '2026-07-28' };
    const error = await callFailing({
      code: ErrorCode.UnsupportedProtocolVersion,
      message: 'Unsupported protocol version',
      data,
    });
    expect(error).toMatchObject({ code: -32022, data });
    expect(error.message).toMatch(/does not support this protocol version/);
  });

  it('-32020: a routing header did not match the request ([E19])', async () => {
    const error = await callFailing({
      code: ErrorCode.HeaderMismatch,
      message: "Header mismatch: Mcp-Name header 'x' does not match body value 'y'",
    });
    expect(error.code).toBe(-32020);
    expect(error.message).toMatch(
      /Header mismatch: Mcp-Name header 'x'.*refused the request's HTTP headers and did not run it/,
    );
  });

  it('-32602 on tools/call is the server’s own error (an unknown tool), not a vanished task', async () => {
    const rig = await extRig();
    const error = await rejection(rig.tasks.callToolAsTask('no_such_tool'));
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ code: -32602, method: 'tools/call' });
    expect((error as Error).message).toMatch(/Unknown tool: no_such_tool/);
  });

  it('-32602 on tasks/get: TaskNotFoundError, and the id stays out of the message', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    rig.server.tasks.delete(handle.taskId!);
    await settle(rig, handle);
    const error = (await result) as TaskError;
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error.message).toMatch(/no longer knows this task/);
    expect(error.message).not.toContain(handle.taskId);
    expect(rig.server.count('tasks/get')).toBe(1);
  });

  it('-32602 on tasks/get after the ttl elapsed: TaskExpiredError (the server deleted it)', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 3_000, expiry: 'delete', pollIntervalMs: 3_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(3_000);
    expect(await result).toBeInstanceOf(TaskExpiredError);
  });

  it('-32602 on tasks/cancel and the read after it: cancel() and the handle both reject with TaskNotFoundError, never a stale working snapshot', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    rig.server.tasks.delete(handle.taskId!);
    const cancelled = await handle.cancel().catch((error: unknown) => error);
    expect(cancelled).toBeInstanceOf(TaskNotFoundError);
    expect(await result).toBe(cancelled);
  });

  it('-32021 on every poll: reported on `error` each time, then the task fails with that error', async () => {
    const rig = await extRig({ server: manual() });
    const reported: TaskError[] = [];
    rig.tasks.on('error', (error) => reported.push(error));
    // [E11]: the data names the extension (a -32021 naming another capability is not this).
    rig.server.on('tasks/get', () => {
      throw missingExtension();
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await settle(rig, handle);
    const error = await result;
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ code: -32021, method: 'tasks/get', taskId: handle.taskId });
    expect((error as Error).message).toMatch(/did not declare the io\.modelcontextprotocol\/tasks extension/);
    expect(rig.server.count('tasks/get')).toBe(5);
    expect(reported.map((e) => (e as TaskRpcError).code)).toEqual([-32021, -32021, -32021, -32021, -32021]);
  });
});

describe('the per-request envelope', () => {
  it('keeps the call’s own _meta keys beside the envelope, an own "__proto__" key (from JSON.parse) included', async () => {
    const rig = await extRig();
    const meta = JSON.parse('{"__proto__": {"injected": true}, "trace": "t-1"}') as Record<string, unknown>;
    const handle = await rig.tasks.callToolAsTask('slow_compute', { polls: 1 }, { meta });
    const sent = rig.server.params('tools/call')[0]?._meta as Record<string, unknown>;
    expect(Object.hasOwn(sent, '__proto__')).toBe(true);
    expect(sent.trace).toBe('t-1');
    expect(sent['io.modelcontextprotocol/protocolVersion']).toEqual(expect.any(String));
    expect((sent as { injected?: unknown }).injected).toBeUndefined();
    const result = handle.result();
    await settle(rig, handle);
    await result;
  });
});
