/**
 * The input a server asks for before it answers a `tools/call` (multi round-trip, [E17]): the
 * call's own callbacks answer it, and the call is sent again with the answers, as often as the
 * server asks (within a bound). An answer with request state only (load shedding) is retried with
 * that state after a backoff, within the call's deadline.
 */
import type { TaskEngine } from '../../engine/engine.js';
import { sleep } from '../../engine/retry.js';
import { sheddingDelay } from '../../engine/timing.js';
import { TaskError, TaskProtocolError, TaskRpcError } from '../../errors.js';
import { DEFAULT_PLAIN_CALL_TIMEOUT_MS, type ResolvedCallOptions } from '../options.js';
import { localCode } from '../../port/port.js';
import type { InlineAnswers } from '../input/inline.js';
import type { PendingCall } from '../input/untagged.js';
import type { StartReply, StartToolCall } from '../../wire/wire.js';

/**
 * Most input rounds one call goes through before it gives up ([E17]: a server may ask again).
 * Answers with request state only (load shedding) are not input rounds: their retries are bounded
 * by time (see {@link shed}).
 */
const MAX_INPUT_ROUNDS = 10;

/** The call whose input rounds these are (a `Launch`). */
export interface RoundsCall extends PendingCall {
  readonly engine: TaskEngine;
  readonly call: ResolvedCallOptions;
  /** True while the callbacks answer a round, with no `tools/call` outstanding (see `Launch`). */
  betweenRounds: boolean;
  /** Clock time the latest `tools/call` was sent (see `Launch`). */
  sentAt: number;
}

/**
 * The input rounds of `Launch.start`, from the first answer that asks for input: `inline`
 * answers each through the call's callbacks, and the call is sent again with the answers. An
 * answer with request state only (no input requests: the server sheds load, [E17]) is retried
 * with that state after a backoff (see {@link shed}); such rounds are not input rounds.
 */
export async function inputRounds(
  launch: RoundsCall,
  inline: Pick<InlineAnswers, 'beforeTask'>,
  base: StartToolCall,
  first: StartReply,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<StartReply> {
  const engine = launch.engine;
  let reply = first;
  /** Input rounds answered so far. */
  let rounds = 0;
  /** The state-only answers in a row so far, and when the request that got the first of them was sent. */
  const shedding = { count: 0, since: 0 };
  while (reply.kind === 'input') {
    launch.betweenRounds = true;
    let attempt: StartToolCall;
    if (reply.input.length === 0) {
      if (shedding.count === 0) shedding.since = launch.sentAt;
      shedding.count += 1;
      await shed(launch, shedding.count, shedding.since);
      // [E17]: the opaque state goes back unchanged; there is nothing to answer.
      attempt = { ...base, requestState: reply.requestState };
    } else {
      shedding.count = 0;
      if (rounds >= MAX_INPUT_ROUNDS) {
        throw new TaskProtocolError(
          `Malformed tools/call reply from server: still asking for input after ${MAX_INPUT_ROUNDS} rounds`,
          {
            method: 'tools/call',
            toolName: launch.toolName,
          },
        );
      }
      rounds += 1;
      // The callbacks' signal fires when the caller gives up, the deadline passes or close() runs.
      const stop = launch.stopSignal();
      const inputResponses = await inline
        .beforeTask(launch.toolName, launch.call.callbacks, reply.input, stop.signal)
        .finally(() => stop.release());
      // The caller gave up meanwhile (the race that awaits this has settled): ask nothing more.
      if (launch.abandoned())
        throw new TaskError('The call was abandoned while its input was being answered', { toolName: launch.toolName });
      if (Object.keys(inputResponses).length === 0) {
        throw new TaskError(`No input callback answered what the server asked before it answers "${launch.toolName}"`, {
          toolName: launch.toolName,
        });
      }
      attempt = { ...base, inputResponses, requestState: reply.requestState };
    }
    launch.betweenRounds = false;
    launch.sentAt = engine.config.clock.now();
    reply = await engine.wire.startToolCall(
      attempt,
      engine.requestOptions(
        timeoutMs,
        signal,
        undefined,
        launch.call.instrument,
        attempt.task !== undefined,
        launch.call.input,
      ),
    );
  }
  return reply;
}

/**
 * Waits before retrying a `tools/call` answered with request state only, for the `count`-th time
 * in a row ([E17]: a server may answer so again and again, and a client may retry). The waits back
 * off as hint-less polls do (engine/timing.ts `sheddingDelay`), on the engine's scheduler. They are
 * bounded by the call's deadline (its stop signal ends the wait: nothing more is sent); a call
 * without one gets what a plain call without one gets to be answered, {@link DEFAULT_PLAIN_CALL_TIMEOUT_MS}
 * from the request that got the first of these answers (`since`), the last retry sent at that
 * bound at the latest.
 * @throws TaskRpcError (`kind` `timeout`) once that bound is spent; a TaskError when the call was
 *   given up during the wait.
 */
async function shed(launch: RoundsCall, count: number, since: number): Promise<void> {
  const { engine } = launch;
  const { config } = engine;
  let delay = sheddingDelay(count, config, config.retry, config.random);
  if (launch.call.timeoutMs === undefined) {
    const left = since + DEFAULT_PLAIN_CALL_TIMEOUT_MS - config.clock.now();
    if (left <= 0) {
      throw new TaskRpcError(
        `tools/call failed: the server answered "${launch.toolName}" with request state only (load shedding) ${count} times in a row for ${DEFAULT_PLAIN_CALL_TIMEOUT_MS} ms, the bound of a call without timeoutMs`,
        {
          method: 'tools/call',
          code: localCode('timeout'),
          transient: true,
          kind: 'timeout',
          toolName: launch.toolName,
        },
      );
    }
    delay = Math.min(delay, left);
  }
  // The wait ends early when the caller gives up, the deadline passes or close() runs.
  const stop = launch.stopSignal();
  const stopped = await sleep(engine.scheduler, delay, stop.signal).then(
    () => false,
    () => true,
  );
  stop.release();
  // Given up (the race that awaits this has settled with the reason): send nothing more.
  if (stopped || launch.abandoned())
    throw new TaskError('The call was abandoned while it waited to retry', { toolName: launch.toolName });
}
