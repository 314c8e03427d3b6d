/**
 * HTTP faults over Streamable HTTP on 127.0.0.1 (issue 6): 5xx and 429 answers to task requests
 * are transient and retried with backoff; other 4xx are not. The result is never lost. And a
 * request stream a proxy cuts before its answer (a real node:http proxy in front of the SDK
 * server), on either SDK: the request is sent again at once, and no question is lost to it.
 */
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskTimeoutError, type TaskClientOptions, type TaskMetrics } from '../../lib/index.js';
import { within } from '../helpers.js';
import { startCuttingProxy, type Cut, type ProxyOptions } from '../support/cutting-proxy.js';
import { startHttpServer, type HttpTaskServer } from '../support/http-server.js';
import { connectOptions, httpTransport, SDK } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup(statusFor: (method: string, seen: number) => number | undefined) {
  const seen = new Map<string, number>();
  const http = await startHttpServer({ pollInterval: 50, notify: false, stepMs: 60 }, undefined, (message) => {
    if (message.method === undefined) return undefined;
    const count = (seen.get(message.method) ?? 0) + 1;
    seen.set(message.method, count);
    return statusFor(message.method, count);
  });
  const tasks = await TaskClient.connect(httpTransport(http.url), {
    ...connectOptions(),
    retry: { minDelayMs: 10, maxDelayMs: 50 },
  });
  cleanups.push(async () => {
    await tasks.close();
    await http.close();
  });
  return { tasks, seen };
}

describe('HTTP faults', () => {
  it('503 and 429 on tasks/get and tasks/result are retried; the result arrives', async () => {
    const { tasks, seen } = await setup((method, n) => {
      if (method === 'tasks/get' && n <= 2) return 503;
      if (method === 'tasks/result' && n === 1) return 429;
      return undefined;
    });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    let metrics: TaskMetrics | undefined;
    tasks.on('settled', (m) => (metrics = m));
    const handle = await tasks.callToolAsTask('analyze', { id: 5, steps: 2 });
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'analysis of 5 done in 2 steps' }]);
    expect(seen.get('tasks/result')).toBe(2);
    expect(metrics?.retries).toBe(1);
    expect(problems.filter((p) => p.includes('503'))).toHaveLength(2);
    expect(problems.some((p) => p.includes('429'))).toBe(true);
  });

  it('a 4xx other than 408/429 on tasks/cancel is not retried', async () => {
    const { tasks, seen } = await setup((method) => (method === 'tasks/cancel' ? 403 : undefined));
    const handle = await tasks.callToolAsTask('analyze', { steps: 1, stepMs: 60_000 });
    await expect(handle.cancel()).rejects.toMatchObject({
      name: 'TaskRpcError',
      kind: 'send',
      transient: false,
      data: { httpStatus: 403 },
    });
    expect(seen.get('tasks/cancel')).toBe(1);
    handle.detach();
  });
});

/**
 * A server whose task asks two questions, `gapMs` apart (working meanwhile), then completes with
 * the answers: the example server's store and message queue, questions tagged with the task, which
 * has `pollInterval` (the SDK server's blocking tasks/result adds an abort listener per interval it
 * waits, and Node warns from 11 on: a long wait needs a longer interval).
 */
function askingTwice(gapMs: number, pollInterval = 50): () => { server: McpServer; cleanup(): void } {
  return () => {
    const store = new InMemoryTaskStore();
    const server = new McpServer(
      { name: 'asks-twice', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: store,
        taskMessageQueue: new InMemoryTaskMessageQueue(),
      },
    );
    server.experimental.tasks.registerToolTask(
      'ask_twice',
      { inputSchema: {}, execution: { taskSupport: 'required' } },
      {
        createTask: async (_args, extra) => {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval });
          const { taskId } = task;
          const ask = async (): Promise<void> => {
            const answers: string[] = [];
            for (const question of ['first', 'second']) {
              if (question === 'second') await new Promise((resolve) => setTimeout(resolve, gapMs));
              await store.updateTaskStatus(taskId, 'input_required', `asking the ${question} question`);
              const answer = await server.server.elicitInput(
                {
                  message: `${question}?`,
                  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
                },
                { relatedTask: { taskId }, timeout: 3_600_000 },
              );
              answers.push(`${question}: ${answer.action}`);
              await store.updateTaskStatus(taskId, 'working', `got the ${question} answer`);
            }
            await store.storeTaskResult(taskId, 'completed', { content: [{ type: 'text', text: answers.join(', ') }] });
          };
          // Its questions fail when the test closes the server before they are answered.
          ask().catch(() => {});
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
    return { server, cleanup: () => store.cleanup() };
  };
}

/**
 * An event store whose ids keep the order the events were stored in. (The SDK's example store
 * sorts its ids, the time in milliseconds and a random suffix: two events of one millisecond, a
 * stream's priming event and its first question, may replay in the wrong order, and the question
 * is then never replayed.)
 */
function orderedEventStore(): EventStore {
  const events: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  return {
    storeEvent: (streamId, message) => {
      const id = `${streamId}_${events.length}`;
      events.push({ id, streamId, message });
      return Promise.resolve(id);
    },
    replayEventsAfter: async (lastEventId, { send }) => {
      const at = events.findIndex((event) => event.id === lastEventId);
      if (at < 0) return '';
      const { streamId } = events[at]!;
      for (const event of events.slice(at + 1)) if (event.streamId === streamId) await send(event.id, event.message);
      return streamId;
    },
  };
}

/**
 * A TaskClient over SDK v1's or v2's Streamable HTTP transport, through a proxy that cuts the
 * answers `pick` picks; every question is accepted, and every problem reported kept.
 */
async function throughProxy(
  http: HttpTaskServer,
  pick: Parameters<typeof startCuttingProxy>[1],
  {
    proxy: proxyOptions,
    ...options
  }: { requestTimeoutMs?: number; retry?: TaskClientOptions['retry']; proxy?: ProxyOptions } = {},
) {
  const proxy = await startCuttingProxy(http.url, pick, proxyOptions);
  const asked: string[] = [];
  const tasks = await TaskClient.connect(httpTransport(proxy.url), {
    ...connectOptions(),
    minPollIntervalMs: 10,
    retry: { minDelayMs: 10, maxDelayMs: 50 },
    ...options,
    onElicitation: (request) => {
      asked.push(String(request.message));
      return { action: 'accept', content: { ok: true, confirm: true } };
    },
  });
  const problems: string[] = [];
  tasks.on('error', (error) => problems.push(error.message));
  cleanups.push(async () => {
    await tasks.close();
    await proxy.close();
    await http.close();
  });
  return { tasks, proxy, asked, problems };
}

/** The first `tasks/result` is cut `how`; every other request passes. */
const firstResult =
  (how: Cut) =>
  (message: { method?: string }, seen: number): Cut | undefined =>
    message.method === 'tasks/result' && seen === 1 ? how : undefined;

// SDK v2's transport tells when a request's stream ends without its answer; SDK v1's does not,
// and resumes only a stream that carried an event id: the port watches its streams (stream-ends.ts).
describe('a request stream cut before its answer, on a 2025-11-25 session', () => {
  it('the blocking tasks/result whose stream ends without its answer is sent again, and the question it was to carry is asked and answered', async () => {
    const { tasks, proxy, asked, problems } = await throughProxy(
      await startHttpServer({ pollInterval: 50, notify: false }),
      // A proxy that lost its upstream answers with an empty event stream: the server never saw the request.
      firstResult('unsent'),
    );
    const handle = await tasks.callToolAsTask('confirm_delete', { path: '/tmp/cut.txt' }, { timeoutMs: 60_000 });
    // Before, with SDK v1, the first tasks/result (which has no timeout) waited for ever, the
    // question still queued on the server, until the call's deadline.
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'deleted /tmp/cut.txt' }]);
    expect(asked).toEqual(['Delete /tmp/cut.txt?']);
    expect(proxy.methods.filter((method) => method.startsWith('tasks/result'))).toEqual([
      'tasks/result (cut)',
      'tasks/result',
    ]);
    expect(problems).toEqual([expect.stringContaining('The request stream ended without an answer')]);
  });

  it('a blocking tasks/result cut after the first question is cancelled ([R27], [A6]): the server stops its wait, and the second question comes on the one sent again', async () => {
    let cutId: unknown;
    const { tasks, proxy, asked, problems } = await throughProxy(
      await startHttpServer({}, askingTwice(300)),
      (message, seen) => {
        if (message.method !== 'tasks/result' || seen !== 1) return undefined;
        cutId = message.id;
        return 'after-first-event';
      },
      // The tasks/result is sent again 1 s after the cut: the second question (0.3 s after the
      // first answer) waits on the server for it meanwhile.
      { retry: { minDelayMs: 1_000, maxDelayMs: 1_000, jitter: 0 } },
    );
    const handle = await tasks.callToolAsTask('ask_twice', {}, { timeoutMs: 60_000 });
    // Before, the server's first wait went on after its stream was cut and took the second question
    // (written on the dead stream) before the tasks/result sent again came: the task waited for an
    // answer until the call's deadline.
    expect((await within(handle.result(), 10_000)).content).toEqual([
      { type: 'text', text: 'first: accept, second: accept' },
    ]);
    expect(asked).toEqual(['first?', 'second?']);
    expect(proxy.cancelled).toEqual([
      { requestId: cutId, reason: expect.stringContaining('The request stream ended without an answer') },
    ]);
    expect(cutId).toEqual(expect.any(String));
    expect(problems).toEqual([expect.stringContaining('The request stream ended without an answer')]);
  });

  // Before, with SDK v1, each request waited for its timeout (30 s here) before it was sent again.
  it.each([
    [
      'the short tasks/result of a completed task whose connection is reset is sent again at once, not after its request timeout',
      'reset',
      7,
    ],
    [
      'an answer cut halfway through its event is no answer: the request fails at once and is sent again',
      'mid-event',
      8,
    ],
  ] as const)('%s', async (_name, cut, id) => {
    const { tasks, proxy, problems } = await throughProxy(
      await startHttpServer({ pollInterval: 50, notify: false, stepMs: 30 }),
      firstResult(cut),
      { requestTimeoutMs: 30_000 },
    );
    const handle = await tasks.callToolAsTask('analyze', { id, steps: 2 }, { timeoutMs: 60_000 });
    expect((await within(handle.result(), 10_000)).content).toEqual([
      { type: 'text', text: `analysis of ${id} done in 2 steps` },
    ]);
    expect(proxy.methods.filter((method) => method.startsWith('tasks/result'))).toEqual([
      'tasks/result (cut)',
      'tasks/result',
    ]);
    expect(problems).toEqual([expect.stringContaining('The request stream ended without an answer')]);
  });

  it('an event cut halfway on a stream that can be resumed does not count, its id with it: the SDK resumes after the last whole event, and the question cut is asked', async () => {
    const { tasks, asked, proxy } = await throughProxy(
      await startHttpServer({}, askingTwice(100), undefined, {
        eventStore: orderedEventStore(),
        retryInterval: 50,
      }),
      // The priming event passes whole; the first question's event is cut inside its data line.
      firstResult('mid-second-event'),
    );
    const handle = await tasks.callToolAsTask('ask_twice', {}, { timeoutMs: 30_000 });
    // Before, SDK v1 read the cut event's id and resumed after it: the question was never replayed,
    // and the task waited for its answer until the deadline.
    expect((await within(handle.result(), 10_000)).content).toEqual([
      { type: 'text', text: 'first: accept, second: accept' },
    ]);
    expect(asked).toEqual(['first?', 'second?']);
    expect(proxy.methods).toContain('tasks/result (cut)');
  });

  it("a cut stream that carried an event id is the SDK's to resume: the request is not failed, and the questions come on the resumed stream", async () => {
    const { tasks, asked, problems } = await throughProxy(
      // An event store: each stream starts with a priming event that has an id, and can be resumed.
      await startHttpServer({}, askingTwice(100), undefined, {
        eventStore: orderedEventStore(),
        retryInterval: 50,
      }),
      firstResult('after-first-event'),
    );
    const handle = await tasks.callToolAsTask('ask_twice', {}, { timeoutMs: 60_000 });
    expect((await within(handle.result(), 10_000)).content).toEqual([
      { type: 'text', text: 'first: accept, second: accept' },
    ]);
    expect(asked).toEqual(['first?', 'second?']);
    expect(problems).toEqual([]);
  });
  // SDK v1 resumes a cut stream that carried an event id, and gives up without a word when it
  // cannot: a 405 to its GET, its last retry failed. SDK v2 tells the end then; on SDK v1 the port
  // tells it (stream-ends.ts, stream-resume.ts).
  it.each([
    [405, 'no stream offered on GET'],
    [404, 'the event id unknown (another instance, a lost store)'],
  ])(
    'a cut stream the SDK is to resume but cannot (%i, %s) is not waited on for ever: the blocking tasks/result is sent again, and the question asked',
    async (status) => {
      let cutId: unknown;
      const { tasks, proxy, asked, problems } = await throughProxy(
        await startHttpServer({ pollInterval: 50, notify: false }),
        (message, seen) => {
          if (message.method !== 'tasks/result' || seen !== 1) return undefined;
          cutId = message.id;
          return 'primed-unsent';
        },
        { proxy: { refuseResume: status } },
      );
      const handle = await tasks.callToolAsTask('confirm_delete', { path: '/tmp/resume.txt' }, { timeoutMs: 60_000 });
      // Before, with SDK v1, the first tasks/result waited for a resumption that never came, until
      // the call's deadline: the question queued on the server was never asked.
      expect((await within(handle.result(), 10_000)).content).toEqual([
        { type: 'text', text: 'deleted /tmp/resume.txt' },
      ]);
      expect(asked).toEqual(['Delete /tmp/resume.txt?']);
      expect(proxy.resumes.length).toBeGreaterThanOrEqual(1);
      // The cut one, then the one sent again (and, should a poll see the task completed before its
      // answer comes, a short one for the result).
      const results = proxy.methods.filter((method) => method.startsWith('tasks/result'));
      expect(results[0]).toBe('tasks/result (cut)');
      expect(results.slice(1)).toContain('tasks/result');
      expect(results.slice(1)).not.toContain('tasks/result (cut)');
      expect(problems).toEqual([expect.stringContaining('The request stream ended without an answer')]);
      if (SDK === 'v1') {
        expect(problems[0]).toContain('not resumed');
        // [R27]: the server may still hold the request it never answered.
        expect(proxy.cancelled).toContainEqual({ requestId: cutId, reason: expect.stringContaining('not resumed') });
      }
    },
  );

  it('a resumed stream that ends with no event is resumed again from the same event id: the request is not failed, and its questions come', async () => {
    const { tasks, asked, problems, proxy } = await throughProxy(
      await startHttpServer({}, askingTwice(100), undefined, {
        eventStore: orderedEventStore(),
        retryInterval: 50,
      }),
      firstResult('after-first-event'),
      { proxy: { emptyResumes: 1 } },
    );
    const handle = await tasks.callToolAsTask('ask_twice', {}, { timeoutMs: 60_000 });
    expect((await within(handle.result(), 10_000)).content).toEqual([
      { type: 'text', text: 'first: accept, second: accept' },
    ]);
    expect(asked).toEqual(['first?', 'second?']);
    // Before, both SDKs resumed the second time without a Last-Event-ID: a GET that opens the
    // session's own stream (refused with 409 here, where one is open; where it is not, a stream
    // that never carries the request's answer, which then waited until the deadline).
    expect(proxy.resumes.length).toBeGreaterThanOrEqual(2);
    expect(proxy.resumes[1]).toBe(proxy.resumes[0]);
    expect(problems).toEqual([]);
  });

  it('a request that ended is no longer resumed: a server that answers every resumption with an empty stream is not asked again once the call gave up', async () => {
    const { tasks, proxy } = await throughProxy(
      // Polled every 500 ms: the SDK server adds an abort listener per poll interval it waits.
      await startHttpServer({}, askingTwice(100, 500), undefined, {
        eventStore: orderedEventStore(),
        retryInterval: 50,
      }),
      firstResult('after-first-event'),
      { proxy: { emptyResumes: Number.MAX_SAFE_INTEGER } },
    );
    const handle = await tasks.callToolAsTask('ask_twice', {}, { timeoutMs: 1_500 });
    await expect(within(handle.result(), 10_000)).rejects.toThrow(TaskTimeoutError);
    // Resumed from its event id while it was open, every 50 ms (the server's retry).
    const atEnd = proxy.resumes.length;
    expect(atEnd).toBeGreaterThanOrEqual(2);
    expect(new Set(proxy.resumes).size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Before, both SDKs went on resuming it for as long as the session lasted (about 20 a second
    // here); one already planned when the call ended may still go out.
    expect(proxy.resumes.length - atEnd).toBeLessThanOrEqual(1);
  });

  it('a resumption is not timed: a server that asks for a pause longer than the request timeout is resumed, and a question that comes late on the resumed stream is asked', async () => {
    const { tasks, asked, problems, proxy } = await throughProxy(
      // The server asks for 1.5 s before a resumption; the second question comes 1.5 s after the
      // first answer, on the resumed stream.
      await startHttpServer({}, askingTwice(1_500, 500), undefined, {
        eventStore: orderedEventStore(),
        retryInterval: 1_500,
      }),
      firstResult('after-first-event'),
      { requestTimeoutMs: 1_000 },
    );
    const handle = await tasks.callToolAsTask('ask_twice', {}, { timeoutMs: 60_000 });
    expect((await within(handle.result(), 15_000)).content).toEqual([
      { type: 'text', text: 'first: accept, second: accept' },
    ]);
    expect(asked).toEqual(['first?', 'second?']);
    expect(proxy.resumes.length).toBeGreaterThanOrEqual(1);
    expect(problems).toEqual([]);
  });
});
