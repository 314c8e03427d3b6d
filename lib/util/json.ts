/** The one JSON-shape check every layer uses on values that came from a peer or a caller. */

/** True for a plain JSON object: not `null`, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
