/**
 * The held "not found" of a terminal task's payload request (payload.ts): a server that hands a
 * result out once (D19) may have given it to the blocking `tasks/result` still open, so the short
 * request's "not found" waits for that one, bounded, before it decides anything.
 */
import type { EngineCore as TaskEngine } from './types.js';
import type { TaskRecord } from './record.js';

/**
 * [V16], [V17], D19: the short `tasks/result` for the terminal task answered "not found" (`-32602`,
 * or `-32002`) while the blocking one is still open. A server that hands a result out once gave
 * it to that one, whose answer may still be on its way (on another stream, behind a proxy): the
 * "not found" is held until that one ends, and `decide` runs only if it brought nothing. The wait
 * is bounded by one request timeout, the time the short request had to answer (the blocking one
 * has none); the caller's deadline, a stop or `close()` end it sooner, as any wait for a payload.
 * No other short request is sent meanwhile: such a server would say "not found" again.
 * @returns false (nothing held) when no blocking request is open.
 */
export function holdGone(engine: TaskEngine, record: TaskRecord, decide: () => void): boolean {
  if (record.payloadFetches === 0) return false;
  record.goneHeld(
    engine.scheduler.after(record.requestTimeoutMs, () => {
      record.holdReleased();
      if (record.settlement === undefined) decide();
    }),
  );
  return true;
}

/**
 * The blocking `tasks/result` ended. A "not found" held for it ({@link holdGone}) is let go: unless
 * that request settled the task, a fresh short request decides (for a failed task, with the error
 * the wait brought, which a server that hands a result out once then answers "not found" to).
 */
export function released(engine: TaskEngine, record: TaskRecord): void {
  if (!record.holdsGone) return;
  engine.scheduler.cancel(record.pollTimer);
  record.holdReleased();
  engine.react(record);
}
