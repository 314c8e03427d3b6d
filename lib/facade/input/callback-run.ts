/**
 * One run of an input callback the router (router.ts) chose: the signal it is given up on, its
 * context, the watcher told of it (`instrumentation`), its answer's shape checked, and a failure
 * reported. Whether a callback may be given the request at all is the router's to say first.
 */
import type { InputContext } from '../../api/index.js';
import { AbandonedError, abandonable, abandoned } from './abandon.js';
import { anyOf } from '../../util/abort.js';
import { TaskInputError } from '../../errors.js';
import { instrumentedConnection } from '../../port/connection-info.js';
import type { Asking, RouterParts } from './router-parts.js';
import { answerFlaw } from '../../util/answer-shape.js';
import type { InputKind } from '../../wire/wire.js';
import { messageOf } from '../../util/text.js';
import { rpcFieldsOf, rpcThrowable } from '../../util/rpc-error.js';

/** The JSON-RPC method of a server's request for input of `kind`. */
export function inputMethod(kind: InputKind): 'elicitation/create' | 'sampling/createMessage' {
  return kind === 'elicitation' ? 'elicitation/create' : 'sampling/createMessage';
}

/** The parts of its TaskClient that a callback run uses (see router-parts.ts). */
export type CallbackRunParts = Pick<RouterParts, 'closeSignal' | 'port' | 'instrument' | 'report'>;

/**
 * Runs `callback`, chosen to answer a request of `kind` with `params` that `about` says what it
 * belongs to, until it answers or the answer is no longer wanted.
 * @returns the answer; rejects with {@link AbandonedError} when it is no longer wanted, or with
 *   the failure (reported) when the callback failed or answered with the wrong shape.
 */
export function runCallback(
  parts: CallbackRunParts,
  kind: InputKind,
  callback: (params: never, context: InputContext) => unknown,
  params: Record<string, unknown>,
  about: Asking,
): Promise<Record<string, unknown>> {
  const { taskId, owner, call, delivery } = about;
  // The answer is no longer wanted once the request is cancelled, its task settles or its call is
  // given up. A task's own signal already fires at close() (and not at detach(), which keeps the
  // answer the task waits for), and so does a call's; a request with neither (an unknown task, an
  // unattributed request) stops at close(), so that none of its callbacks answers after it.
  const signal = anyOf(about.signal, owner?.signal ?? about.stop ?? parts.closeSignal.signal);
  const toolName = owner?.handle.toolName ?? call?.toolName;
  const context: InputContext = {
    taskId,
    handle: owner?.handle,
    toolName,
    delivery,
    signal: signal.signal,
    ...(about.inferred === true ? { inferred: true } : {}),
    ...(about.key === undefined ? {} : { key: about.key }),
  };
  const method = inputMethod(kind);
  const watch = parts.instrument?.input?.({
    method,
    id: about.id,
    connection: instrumentedConnection(about.port ?? parts.port),
    params,
    context,
  });
  const answering = (): Promise<Record<string, unknown>> =>
    callback(params as never, context) as Promise<Record<string, unknown>>;
  const run = watch?.run;
  return abandonable(
    // Inside the watcher's `run`, when it has one (its span of the question current meanwhile).
    run === undefined ? answering : () => run(answering),
    signal.signal,
  ).then(
    (answer) => {
      signal.release();
      // The answer's shape, checked before anything is told it was answered: a malformed one goes
      // to no server. A request of the server's own gets -32603 naming the flaw instead (the wire
      // sends an error with a code as it is); input riding on a task's update or a call's reply
      // is reported and left out of the answers, as a callback that throws ([E31]). Either way
      // the watcher is told it failed, with the code only where an error went back.
      const flaw = answerFlaw(kind, answer);
      if (flaw === undefined) {
        watch?.end({ kind: 'answered', result: answer });
        return answer;
      }
      const message = `The ${kind} callback returned an invalid result: ${flaw}`;
      if (delivery === 'request') {
        const refusal = rpcThrowable(-32603, message);
        watch?.end({ kind: 'failed', error: refusal, code: -32603 });
        throw refusal;
      }
      const report = new TaskInputError(message, { feature: kind, taskId, task: owner?.handle.task, toolName });
      watch?.end({ kind: 'failed', error: report });
      parts.report(report);
      throw report;
    },
    (error: unknown) => {
      signal.release();
      // A request of the server's own is answered with an error, whose code the watcher is told:
      // the thrown value's integer code, else -32603, as the 2025-11-25 input tap
      // (wire/v2025/input.ts) and the port's answer (port/inbound.ts) choose it. Input riding on
      // a task's update or a call's reply is left out of the answers instead ([E31]): no code.
      watch?.end(
        error instanceof AbandonedError
          ? { kind: 'abandoned' }
          : { kind: 'failed', error, code: delivery === 'request' ? (rpcFieldsOf(error).code ?? -32603) : undefined },
      );
      // An answer abandoned because the task ended or the server gave up is not a failure; one
      // abandoned because a stop of the task began is refused once the stop is over.
      if (error instanceof AbandonedError) return abandoned(signal.signal.reason);
      parts.report(
        new TaskInputError(`The ${kind} callback failed: ${messageOf(error)}`, {
          feature: kind,
          taskId,
          task: owner?.handle.task,
          toolName,
          cause: error,
        }),
      );
      throw error;
    },
  );
}
