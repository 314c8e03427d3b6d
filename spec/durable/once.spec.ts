/**
 * Two runs of one job in one worker (its lock expired and it came back to the same worker while
 * the first run goes on) each get their own watch of the control channel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlWatch, writeControl } from '../../lib/bullmq/control.js';
import { skipWithoutRedis, openQueue, REDIS_AVAILABLE, startRedis, type RedisServer } from './support.js';

skipWithoutRedis('durable queue: once');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with `promise`'s value, or with `fallback` after `ms`. */
const within = <T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> =>
  Promise.race([promise, pause(ms).then(() => fallback)]);

describe.skipIf(!REDIS_AVAILABLE)('durable queue: once', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('two runs of one job in one worker each get their watch: both are ready, and releasing one leaves the other', async () => {
    const opened = await openQueue(redis, 'once-watch');
    const watch = new ControlWatch(opened.queue, 50, () => {});
    try {
      const first = watch.watch('7');
      const second = watch.watch('7');
      expect(await within(Promise.all([first.ready, second.ready]), 3_000, 'not ready')).toEqual([
        undefined,
        undefined,
      ]);
      first.release();
      await writeControl(opened.queue, '7', { kind: 'cancel' }, { reason: 'no longer needed' }, false);
      expect(await within(second.cancelled, 3_000, 'not cancelled')).toBe('no longer needed');
      second.release();
    } finally {
      watch.stop();
      await opened.close();
    }
  }, 30_000);
});
