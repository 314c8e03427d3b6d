/**
 * A check for UI code: whether a tool part's `output` (typed `unknown` for dynamic tools) is a
 * task tool's output. It imports nothing at run time (the package has no side effects, so a
 * bundler keeps only this function of the entry point).
 */
import type { TaskToolOutput } from './types.js';

/** True when `value` is a {@link TaskToolOutput}: a `status` or the final `result`. */
export function isTaskToolOutput(value: unknown): value is TaskToolOutput {
  if (typeof value !== 'object' || value === null) return false;
  const { type } = value as { type?: unknown };
  if (type === 'status') return typeof (value as { status?: unknown }).status === 'string';
  return type === 'result' && Array.isArray((value as { content?: unknown }).content);
}
