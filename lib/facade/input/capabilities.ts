/**
 * The input capabilities a call's or a client's callbacks need: on 2025-11-25 an SDK client gets
 * elicitation and sampling requests only if it declared those capabilities when it connected; on
 * the tasks extension each request declares the input its call answers ([E35]), so any callback
 * can be given.
 */
import type { InputCallbacks } from '../../api/index.js';
import { TaskNotSupportedError } from '../../errors.js';
import type { InputKind, TaskWire } from '../../wire/wire.js';

/**
 * Fails fast when callbacks are given for input the SDK client never receives (on 2025-11-25:
 * elicitation/sampling requests come only if it declared those capabilities when it connected).
 * The wire says what it can receive ({@link TaskWire.inputCapabilities}).
 * @throws TaskNotSupportedError naming the missing capability.
 */
export function checkInputCapabilities(wire: TaskWire, callbacks: InputCallbacks, toolName?: string): void {
  const declared = wire.inputCapabilities();
  const need: Array<[InputKind, unknown]> = [
    ['elicitation', callbacks.onElicitation],
    ['sampling', callbacks.onSampling],
  ];
  for (const [kind, callback] of need) {
    if (callback !== undefined && !declared[kind]) {
      const option = kind === 'elicitation' ? 'onElicitation' : 'onSampling';
      throw new TaskNotSupportedError(
        `${option} was given, but the SDK Client did not declare the "${kind}" capability, so the server will never send such requests. Declare it where the client is created: capabilities: { ${kind}: {} } in the options of new Client() or of TaskClient.connect() (which declares it by itself only for a TaskClient-level ${option}).`,
        { feature: kind, toolName },
      );
    }
  }
}
