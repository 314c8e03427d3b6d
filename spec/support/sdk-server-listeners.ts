/**
 * SDK v1's server, run in the test's process, leaks abort listeners: its blocking `tasks/result`
 * (`Protocol._waitForTaskUpdate`) adds one to the request's signal at every poll interval and never
 * removes it, so a `tasks/result` held for more than ten intervals makes Node print a
 * MaxListenersExceededWarning (11 abort listeners on one AbortSignal) in `npm test`. The listener is
 * the SDK server's, not the library's (traced with `--trace-warnings`; the library adds one
 * listener per signal, `lib/util/abort.ts`). A test whose client may hold such a `tasks/result`
 * raises Node's default limit, which applies to the signals made while it is raised, and puts it
 * back when it ends.
 */
import { EventEmitter, setMaxListeners } from 'node:events';

/**
 * Raises Node's default listener limit for the SDK v1 server's request signals made from now on.
 * @returns a function that puts the previous default back.
 */
export function allowSdkServerListeners(): () => void {
  const previous = EventEmitter.defaultMaxListeners;
  setMaxListeners(1_000);
  return () => setMaxListeners(previous);
}
