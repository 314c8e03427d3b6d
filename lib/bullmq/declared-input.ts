/**
 * The input callbacks a connection can take: a 2025-11-25 connection whose SDK client did not
 * declare elicitation (or sampling) refuses a callback for it before sending anything; the refusal
 * is remembered per TaskClient, and the call is made again without that callback. A connection on
 * the tasks extension takes both (each call declares what its callbacks answer, [E35]).
 */
import {
  TaskNotSupportedError,
  type ElicitationCallback,
  type InputCallbacks,
  type SamplingCallback,
  type TaskClient,
} from '../index.js';

/** Which input capabilities each connection lacks: learned from the first call that said so. */
const undeclared = new WeakMap<TaskClient, Set<'elicitation' | 'sampling'>>();

/**
 * True (and remembered for `tasks`) when `error` is the refusal of an input callback that `input`
 * passed and the connection cannot take. Jobs starting together on a new connection may each be
 * refused before any of them has remembered it: each retries without that callback.
 */
function refusedInput(tasks: TaskClient, error: unknown, input: InputCallbacks): boolean {
  if (!(error instanceof TaskNotSupportedError)) return false;
  const feature = error.feature;
  if (feature !== 'elicitation' && feature !== 'sampling') return false;
  if ((feature === 'elicitation' ? input.onElicitation : input.onSampling) === undefined) return false;
  const missing = undeclared.get(tasks) ?? new Set();
  missing.add(feature);
  undeclared.set(tasks, missing);
  return true;
}

/**
 * Runs `start` with the callbacks of `all` that the connection of `tasks` can take: a 2025-11-25
 * connection whose SDK client did not declare elicitation (or sampling) refuses a callback for it
 * before sending anything, so the call is made again without it (that kind of question then never
 * reaches the job). On the tasks extension both are taken, and the call's requests declare them.
 */
export async function withDeclaredInput<T>(
  tasks: TaskClient,
  all: { readonly onElicitation: ElicitationCallback; readonly onSampling: SamplingCallback },
  start: (input: InputCallbacks) => T | Promise<T>,
): Promise<T> {
  for (;;) {
    const missing = undeclared.get(tasks);
    const input: { onElicitation?: ElicitationCallback; onSampling?: SamplingCallback } = {};
    if (missing?.has('elicitation') !== true) input.onElicitation = all.onElicitation;
    if (missing?.has('sampling') !== true) input.onSampling = all.onSampling;
    try {
      return await start(input);
    } catch (error) {
      if (!refusedInput(tasks, error, input)) throw error;
    }
  }
}
