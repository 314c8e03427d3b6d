/**
 * The harness's forced collections. `bench/scenario.ts` forces them before and after each measured
 * phase, and `bench/profile.ts` finds the phases in V8's trace by counting them: both take the count
 * from here.
 */

/** Full collections that one {@link forceGc} forces (each printed by `--trace-gc` as "testing"). */
export const COLLECTIONS_PER_FORCE = 3;

/**
 * Forces {@link COLLECTIONS_PER_FORCE} full collections, and lets the tasks the first one queues
 * run before the others: the cleanup of a `FinalizationRegistry` runs as a task of its own after
 * the collection that found its targets dead, and until it has run, what each registration holds
 * stays on the heap. Node's `fetch` (undici) registers every request made with a `signal` (the
 * request signal SDK v2's Streamable HTTP transport combines with its own), and holds that signal,
 * its listeners and its source set until the cleanup: about 1 KB of garbage per request answered
 * since the last collection, which a heap reading taken at once counted as the memory of the tasks
 * in flight. False when `gc` is not exposed.
 */
export async function forceGc(): Promise<boolean> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  await nextTask();
  await nextTask();
  for (let i = 1; i < COLLECTIONS_PER_FORCE; i += 1) gc();
  return true;
}

/** Resolves from a timer task, after the tasks already queued (a finalization cleanup among them). */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
