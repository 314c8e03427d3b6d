/** The one JSON-shape check every layer uses on values that came from a peer or a caller. */

/** True for a plain JSON object: not `null`, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `path` inside `value` (each step an object), or `undefined` when a step is missing or not an object. */
export function objectAt(value: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  let at = value;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return isObject(at) ? at : undefined;
}

/**
 * `value` as JSON with every object's keys sorted: two values that differ only in key order give
 * the same text. For values that came off the wire (plain JSON).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}
