/**
 * The input a server asks for before it answers a `tools/call` (multi round-trip, [E17]): the
 * call's own callbacks answer it, and the call is sent again with the answers, as often as the
 * server asks (within a bound).
 */
import type { TaskEngine } from '../../engine/engine.js';
import { TaskError, TaskProtocolError } from '../../errors.js';
import type { ResolvedCallOptions } from '../options.js';
import type { InlineAnswers } from '../input/inline.js';
import type { PendingCall } from '../input/untagged.js';
import type { StartReply, StartToolCall } from '../../wire/wire.js';

/** Most input rounds one call goes through before it gives up ([E17]: a server may ask again). */
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
 * answers each through the call's callbacks, and the call is sent again with the answers.
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
  for (let round = 0; reply.kind === 'input'; round += 1) {
    launch.betweenRounds = true;
    if (round >= MAX_INPUT_ROUNDS) {
      throw new TaskProtocolError(
        `Malformed tools/call reply from server: still asking for input after ${MAX_INPUT_ROUNDS} rounds`,
        {
          method: 'tools/call',
          toolName: launch.toolName,
        },
      );
    }
    // The callbacks' signal fires when the caller gives up, the deadline passes or close() runs.
    const stop = launch.stopSignal();
    const inputResponses = await inline
      .beforeTask(launch.toolName, launch.call.callbacks, reply.input, stop.signal)
      .finally(() => stop.release());
    // The caller gave up meanwhile (the race that awaits this has settled): ask nothing more.
    if (launch.abandoned())
      throw new TaskError('The call was abandoned while its input was being answered', { toolName: launch.toolName });
    if (reply.input.length > 0 && Object.keys(inputResponses).length === 0) {
      throw new TaskError(`No input callback answered what the server asked before it answers "${launch.toolName}"`, {
        toolName: launch.toolName,
      });
    }
    launch.betweenRounds = false;
    const attempt = { ...base, inputResponses, requestState: reply.requestState };
    launch.sentAt = engine.config.clock.now();
    reply = await engine.wire.startToolCall(
      attempt,
      engine.requestOptions(timeoutMs, signal, undefined, launch.call.instrument),
    );
  }
  return reply;
}
