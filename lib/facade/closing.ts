/**
 * The `TaskClient.close()` sequence: what it rejects, settles, stops and closes, and in which
 * order.
 */
import type { Abandoned } from './call/abandoned.js';
import type { WaitingLaunch } from './call/launch-parts.js';
import type { Connection } from './connection/connection.js';
import type { EarlyInput } from './input/early.js';
import type { TaskEngine } from '../engine/engine.js';
import { TaskClosedError, describeRemoteCancel } from '../errors.js';
import type { Limiter } from './call/limiter.js';
import type { ResolvedClientOptions } from './options.js';
import type { LiveTasks } from './handle/registry.js';
import type { Serving } from './input/serving.js';
import type { UntaggedInput } from './input/untagged.js';

/** The parts of a TaskClient that `close()` closes (see facade/parts.ts). */
export interface ClosingParts {
  readonly config: ResolvedClientOptions;
  readonly engine: TaskEngine;
  /** Aborted when `close()` begins: calls still under way reject at once. */
  readonly closeSignal: AbortController;
  /** The calls waiting for their reply with only `close()` to race it (see call/launch-parts.ts). */
  readonly launching: { snapshot(): WaitingLaunch[] };
  readonly serving: Serving;
  readonly limiter: Limiter;
  readonly connection: Connection;
  readonly abandoned: Abandoned;
  readonly live: LiveTasks;
  readonly earlyInput: EarlyInput;
  readonly untagged: UntaggedInput;
}

/**
 * Closes the client's parts (see `TaskClient.close`); with `cancelRunning`, every running task
 * gets one `tasks/cancel`, bounded by `closeTimeoutMs` (default `requestTimeoutMs`).
 */
export async function closeParts(parts: ClosingParts, cancelRunning: boolean): Promise<void> {
  const { config, engine, connection } = parts;
  const closed = (message: string): TaskClosedError => new TaskClosedError(message);
  parts.closeSignal.abort(closed('The TaskClient was closed during the call'));
  for (const launch of parts.launching.snapshot()) launch.closing();
  // Untagged requests this client is judging are judged now (and passed on: it answers nothing more).
  parts.untagged.close();
  await parts.serving.close();
  parts.limiter.rejectAll(closed('The TaskClient was closed while the call waited for a slot'));
  connection.shutdown(closed('The TaskClient was closed while the call waited for the connection'));
  const bound = config.closeTimeoutMs ?? config.requestTimeoutMs;
  const began = config.clock.now();
  await closeTracked(engine, cancelRunning, bound);
  // A call given up before the server answered may still create a task, which gets one
  // tasks/cancel when its id arrives. Closing an SDK client we made would drop both: wait for
  // them, within what is left of the bound. A client of the user's stays open: no wait.
  if (connection.ownsClient) await parts.abandoned.settle(bound - (config.clock.now() - began));
  connection.close();
  // The user's client stays open, and so do the requests left on it: they keep their timeouts.
  engine.shutdown(!connection.ownsClient);
  parts.live.clear();
  parts.earlyInput.close();
  await connection.closeClient();
}

/**
 * Settles every tracked task with `TaskClosedError` (`close()`). With `cancelRemote`, each running
 * task gets one `tasks/cancel`, all at once, and the whole is bounded by `graceMs`.
 */
export async function closeTracked(engine: TaskEngine, cancelRemote: boolean, graceMs: number): Promise<void> {
  await Promise.all(
    [...engine.tracked()].map((record) =>
      engine.giveUp(record, {
        cancelRemote,
        force: true,
        once: true,
        graceMs,
        error: (remote) =>
          new TaskClosedError(`The TaskClient was closed; ${describeRemoteCancel(remote)}`, {
            task: record.task,
            toolName: record.toolName,
          }),
      }),
    ),
  );
}
