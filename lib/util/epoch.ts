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
 * The offset is a 32-bit integer (`| 0`): V8 then keeps it as a small integer in the field, where
 * the plain difference of two clock readings (both heap numbers) would be a heap number of its
 * own, 16 bytes per field, and a field that first held a small integer and then such a number
 * changes its hidden class (util/shapes.ts). Offsets beyond 2^31 ms (24 days after the module
 * loaded) do not read back, and are kept as given.
 */
export function offsetOf(value: number): number {
  const offset = (value - EPOCH) | 0;
  // Object.is: -0 would read back as +0.
  return Object.is(offset + EPOCH, value) ? offset : NaN;
}
