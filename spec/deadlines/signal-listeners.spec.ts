/**
 * A caller's AbortSignal carries at most one listener of the library's while calls wait on it,
 * and none once they are done (lib/util/abort.ts): agent hosts share one signal among many calls
 * and keep it for the session. The client's own close signal keeps its listener for the client's
 * life instead (every call races close()); that is never a caller's signal.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClosedError } from '../../lib/index.js';
import { flush, rejection } from '../helpers.js';
import { NO_REPLY, creating } from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("the caller's signal", () => {
  it('carries one listener while twelve calls share it, and none after they settled', async () => {
    const { server, tasks, clock } = await scriptedTaskClient((c) => cleanups.push(c));
    creating(server, { pollInterval: 1_000 });
    const shared = new AbortController();
    const handles = await Promise.all(
      Array.from({ length: 12 }, () => tasks.callToolAsTask('job', {}, { signal: shared.signal })),
    );
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    for (const handle of handles) server.tasks.finish(handle.taskId!, 'completed', { result: textResult('ok') });
    await clock.advance(1_000);
    const results = await Promise.all(handles.map((handle) => handle.result({ signal: shared.signal })));
    expect(results).toHaveLength(12);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('carries none after a call whose creation it raced, one call after another', async () => {
    const { server, tasks, clock } = await scriptedTaskClient((c) => cleanups.push(c));
    creating(server, { pollInterval: 1_000 });
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i += 1) {
      const handle = await tasks.callToolAsTask('job', {}, { signal });
      server.tasks.finish(handle.taskId!, 'completed', { result: textResult('ok') });
      await clock.advance(1_000);
      await handle.result();
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    }
  });

  it('carries none after close() gave up a call whose tools/call the server never answers (the SDK client stays open)', async () => {
    const { server, tasks } = await scriptedTaskClient((c) => cleanups.push(c));
    server.on('tools/call', () => NO_REPLY);
    const signal = new AbortController().signal;
    const call = tasks.callToolAsTask('job', {}, { signal });
    await flush();
    expect(server.count('tools/call')).toBe(1);
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await tasks.close();
    expect(await rejection(call)).toBeInstanceOf(TaskClosedError);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});
