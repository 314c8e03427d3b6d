/**
 * The wire contract: one set of tests every {@link TaskWire} must pass, whatever its protocol
 * form. {@link describeWireContract} runs it against one wire factory; each test scripts the server
 * through the protocol-neutral {@link WireDriver} and asserts only what the seam promises.
 *
 * Where the seam lets forms differ, a test branches on `features()` and checks the branch the wire
 * declares (the payload fetched or riding on the terminal snapshot, a cancel answered with a
 * snapshot or a bare acknowledgement), never on `kind`.
 *
 * This module holds the contract of the data a wire returns (features, tool calls, snapshots,
 * final payloads, cancel); contract-faults.ts holds the contract of its failures, timers and
 * events; support.ts the driver API, the manual timers and the shared helpers.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TaskProtocolError } from '../../lib/index.js';
import { flush } from '../helpers.js';
import { describeFaultContract } from './contract-faults.js';
import {
  deviable,
  failureClass,
  finalPayload,
  startTask,
  text,
  track,
  type KnownDeviations,
  type Rig,
  type WireDriver,
  type WireFactory,
} from './support.js';

const WIRE_KINDS: readonly string[] = ['2025-11-25', 'io.modelcontextprotocol/tasks'];

/**
 * Registers the whole contract for the wire `factory` makes. `known` lists the library bugs on
 * record for this wire: those tests run as expected failures (see `deviable` in support.ts).
 */
export function describeWireContract(name: string, factory: WireFactory, known: KnownDeviations = {}): void {
  describe(`wire contract: ${name}`, () => {
    let current: WireDriver | undefined;
    const rig: Rig = {
      get driver(): WireDriver {
        if (current === undefined) throw new Error('no driver: the factory failed');
        return current;
      },
      known,
    };
    beforeEach(async () => {
      current = await factory();
    });
    afterEach(async () => {
      const d = current;
      current = undefined;
      if (d === undefined) return;
      await d.close();
      // [R27]: a cancellation notice only ever names a request still in progress.
      expect(
        d.cancelNotices().filter((notice) => !notice.open),
        'notice for an answered request ([R27])',
      ).toEqual([]);
    });

    describeDataContract(rig);
    describeFaultContract(rig);
  });
}

function describeDataContract(rig: Rig): void {
  describe('features()', () => {
    it('are stable and consistent', () => {
      const { wire } = rig.driver;
      const features = wire.features();
      expect(wire.features()).toEqual(features);
      expect(WIRE_KINDS).toContain(wire.kind);
      expect(features.tasks, 'the scripted server offers tasks').toBe(true);
      // [R29]: input that waits on the blocking payload request needs a payload request.
      if (features.inputViaPayload) expect(features.payloadFetch).toBe(true);
      if (features.cancelSnapshot) expect(features.cancel).toBe(true);
      expect(typeof wire.unsupportedReason()).toBe('string');
      expect(wire.unsupportedReason().length).toBeGreaterThan(0);
    });
  });

  describe('startToolCall()', () => {
    it('gives a created task as the server reported it', async () => {
      const d = rig.driver;
      const fields = {
        taskId: 'job-17',
        statusMessage: 'queued',
        ttl: 30_000,
        pollInterval: 250,
        createdAt: '2026-01-01T00:00:00.123Z',
        lastUpdatedAt: '2026-01-01T00:00:01.456Z',
      };
      const { task } = await startTask(d, fields);
      expect(task).toEqual({ ...fields, status: 'working' });
      expect(d.calls()).toEqual([{ name: 'job', arguments: { n: 1 } }]);
    });

    it('decodes a missing ttl as null (D1)', async () => {
      const { task } = await startTask(rig.driver, { ttl: null });
      expect(task.ttl).toBeNull();
    });

    it('leaves a missing pollInterval absent (D2)', async () => {
      const { task } = await startTask(rig.driver, { pollInterval: null });
      expect('pollInterval' in task).toBe(false);
    });

    it('keeps ids with colons, and they work in later requests (D3)', async () => {
      const d = rig.driver;
      const taskId = '5f0c2a9e4b7d41c3a8e6f1d2b3c4a5e6:7e9a1c2b-3d4e-4f50-8a6b-7c8d9e0f1a2b';
      const { task } = await startTask(d, { taskId });
      expect(task.taskId).toBe(taskId);
      expect((await d.wire.getTask(taskId, d.options())).task.taskId).toBe(taskId);
    });

    it('keeps whole-second timestamps as sent, equal ones included (D4)', async () => {
      const at = '2026-01-01T00:00:00Z';
      const { task } = await startTask(rig.driver, { createdAt: at, lastUpdatedAt: at });
      expect(task.createdAt).toBe(at);
      expect(task.lastUpdatedAt).toBe(at);
    });

    deviable(
      rig,
      'result-type-kept',
      'gives a plain answer as immediate, whether or not a task was asked for',
      async () => {
        const d = rig.driver;
        d.answerNextCall(text('asked'));
        d.answerNextCall(text('not asked'));
        const asked = await d.wire.startToolCall({ name: 'job', task: {} }, d.options());
        const plain = await d.wire.startToolCall({ name: 'job' }, d.options());
        expect(asked).toEqual({ kind: 'immediate', result: text('asked') });
        expect(plain).toEqual({ kind: 'immediate', result: text('not asked') });
      },
    );

    it('rejects a malformed reply as a protocol error', async () => {
      const d = rig.driver;
      d.malformedNext('call');
      expect(await failureClass(d, d.wire.startToolCall({ name: 'job', task: {} }, d.options()))).toBe('protocol');
    });
  });

  describe('getTask()', () => {
    it('follows the task through its statuses', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.setStatus(id, 'input_required', 'needs a yes');
      expect((await d.wire.getTask(id, d.options())).task).toMatchObject({
        taskId: id,
        status: 'input_required',
        statusMessage: 'needs a yes',
      });
      d.setStatus(id, 'working');
      expect((await d.wire.getTask(id, d.options())).task).toMatchObject({ taskId: id, status: 'working' });
      d.finish(id, 'completed', { kind: 'result', result: text('done') }, 'all good');
      expect((await d.wire.getTask(id, d.options())).task).toMatchObject({
        taskId: id,
        status: 'completed',
        statusMessage: 'all good',
      });
    });

    deviable(
      rig,
      'result-type-kept',
      'carries the final payload on a terminal snapshot exactly when it is not fetched',
      async () => {
        const d = rig.driver;
        const { id } = await startTask(d);
        expect((await d.wire.getTask(id, d.options())).payload, 'no payload while working').toBeUndefined();
        d.finish(id, 'completed', { kind: 'result', result: text('done') });
        const snapshot = await d.wire.getTask(id, d.options());
        if (d.wire.features().payloadFetch) expect(snapshot.payload).toBeUndefined();
        else expect(snapshot.payload).toEqual({ kind: 'result', result: text('done'), tagged: true });
      },
    );

    it('rejects a reply about another task as a TaskProtocolError', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const features = d.wire.features();
      d.otherTaskNext('get');
      await expect(d.wire.getTask(id, d.options())).rejects.toBeInstanceOf(TaskProtocolError);
      if (features.cancelSnapshot) {
        d.otherTaskNext('cancel');
        await expect(d.wire.cancelTask(id, d.options())).rejects.toBeInstanceOf(TaskProtocolError);
      }
      if (features.payloadFetch) {
        d.finish(id, 'completed', { kind: 'result', result: text('done') });
        d.otherTaskNext('payload');
        await expect(d.wire.getPayload(id, d.options())).rejects.toBeInstanceOf(TaskProtocolError);
      }
    });
  });

  describe('the final payload', () => {
    it('of a completed task is its tool result', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const result = { ...text('done'), structuredContent: { answer: 42 } };
      d.finish(id, 'completed', { kind: 'result', result });
      // The payload may carry its own `_meta` (the related-task tag, [V19]) besides the result.
      expect(await finalPayload(d, id)).toMatchObject({ kind: 'result', result, tagged: true });
    });

    it('of a task failed with an isError result is that result ([V18])', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.finish(id, 'failed', { kind: 'result', result: { ...text('disk full'), isError: true } }, 'disk full');
      expect(await finalPayload(d, id)).toMatchObject({
        kind: 'result',
        result: { ...text('disk full'), isError: true },
        tagged: true,
      });
    });

    it('of a task failed with a bare result is a result with empty content (D6)', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.finish(id, 'failed', { kind: 'result', result: {} }, 'the reason is only here');
      const payload = await finalPayload(d, id);
      expect(payload).toMatchObject({ kind: 'result', result: { content: [] } });
      expect(payload?.kind === 'result' && payload.result.isError === true).toBe(false);
    });

    it('of a task failed with a JSON-RPC error is that error ([V17], D6)', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const error = { code: -32603, message: 'tool exploded', data: { step: 3 } };
      d.finish(id, 'failed', { kind: 'error', error });
      expect(await finalPayload(d, id)).toEqual({ kind: 'error', error });
    });

    deviable(
      rig,
      'failed-with-invalid-params',
      'of a task failed with a -32602 JSON-RPC error is that error, not a vanished task ([V17], [V26])',
      async () => {
        // -32602 is both "unknown task" on tasks/* ([V26]) and a tool's own "invalid params" error,
        // which tasks/result must return as is ([V17]); the task exists and says failed.
        const d = rig.driver;
        const { id } = await startTask(d);
        const error = { code: -32602, message: 'Invalid arguments for tool job: n must be a string' };
        d.finish(id, 'failed', { kind: 'error', error }, 'invalid arguments');
        expect((await d.wire.getTask(id, d.options())).task.status).toBe('failed');
        expect(await finalPayload(d, id)).toMatchObject({ kind: 'error', error });
      },
    );

    it('is not there before the task ends: a fetch waits for the end ([V16])', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      if (!d.wire.features().payloadFetch) {
        expect((await d.wire.getTask(id, d.options())).payload).toBeUndefined();
        return;
      }
      const fetch = track(d.wire.getPayload(id, d.options()));
      await flush();
      expect(fetch.settled, 'the payload fetch blocks while the task works').toBe(false);
      d.finish(id, 'completed', { kind: 'result', result: text('late') });
      await d.timers.advance(0);
      expect(fetch.value).toMatchObject({ kind: 'result', result: text('late'), tagged: true });
    });
  });

  describe('cancelTask()', () => {
    it('answers with a snapshot or an ack, as features().cancelSnapshot says', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const reply = await d.wire.cancelTask(id, d.options());
      if (!d.wire.features().cancelSnapshot) {
        expect(reply).toEqual({ kind: 'ack' });
        return;
      }
      expect(reply.kind).toBe('snapshot');
      if (reply.kind === 'snapshot') expect(reply.snapshot.task).toMatchObject({ taskId: id, status: 'cancelled' });
    });

    it('of a terminal task gives an ack or a vanished classification', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.finish(id, 'completed', { kind: 'result', result: text('done') });
      const attempt = d.wire.cancelTask(id, d.options());
      const answer = await attempt.then(
        (reply) => reply.kind,
        (error: unknown) => d.wire.classify(error),
      );
      expect(['ack', 'vanished']).toContain(answer);
    });
  });
}
