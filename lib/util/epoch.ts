/**
 * Compact storage of clock times. Per-task state keeps a few clock times (when to poll next, a
 * timer's due time, when tracking started). With the default clock (`Date.now()`, whole
 * milliseconds near 1.8e12) each would be a 16-byte heap number per in-flight task; as an offset
 * from {@link EPOCH} it is a small integer that V8 keeps inline in the object. A value whose offset
 * does not give it back exactly (another clock's fractions, or a clock far from this one) is kept
 * as given instead, and the holder records which form it kept.
 */

/** The instant offsets count from (whole milliseconds, fixed when the module loads). */
export const EPOCH: number = Date.now();

/**
 * `value` as an offset from {@link EPOCH}, or NaN when adding {@link EPOCH} back would not give
 * `value` exactly (the check is the read itself, so a kept offset always reads back as `value`).
 */
export function offsetOf(value: number): number {
  const offset = value - EPOCH;
  // Object.is: -0 would read back as +0.
  return Object.is(offset + EPOCH, value) ? offset : NaN;
}
