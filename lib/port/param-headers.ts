/**
 * The `Mcp-Param-{Name}` headers of a `tools/call` over Streamable HTTP on the modern era ([E31]).
 * A tool's `inputSchema` may mark a property with `x-mcp-header: "<Name>"`; the call's value of
 * that property then goes into a header too, so that proxies can route on it without reading the
 * body, and the server checks that the two agree ([E32]). Pure functions: {@link scanParamHeaders}
 * reads a schema once, {@link paramHeaders} builds one call's headers from what it found.
 *
 * Browsers are not exempt: the transport spec asks every Streamable HTTP client to mirror, and the
 * transport already sends headers of its own (`Mcp-Method`, `Mcp-Name`) that a server answering
 * browsers must allow in its CORS preflight; the `Mcp-Param-*` names join that list.
 */
import { isObject } from '../util/json.js';

/** One valid declaration: the header's name part, and the property path whose value it carries. */
export interface ParamHeader {
  readonly name: string;
  readonly path: readonly string[];
}

/** The annotation's key in a property's schema. */
const ANNOTATION = 'x-mcp-header';
/** An HTTP field-name token (`1*tchar`, RFC 9110): no spaces, colons, controls or non-ASCII. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The types a mirrored property may have (`number` is not one of them). */
const PRIMITIVES: ReadonlySet<unknown> = new Set(['string', 'integer', 'boolean']);
/** Keywords whose values are instances, not schemas: a key named like the annotation there is data. */
const INSTANCE_KEYWORDS: ReadonlySet<string> = new Set(['const', 'default', 'enum', 'examples']);
/** Deepest schema walked; a deeper one is treated as invalid. */
const MAX_DEPTH = 64;

/** True for a `type` of one primitive, or a list of them (`null` allowed beside, since null values are omitted). */
function primitive(type: unknown): boolean {
  if (!Array.isArray(type)) return PRIMITIVES.has(type);
  return type.some((each) => PRIMITIVES.has(each)) && type.every((each) => each === 'null' || PRIMITIVES.has(each));
}

/**
 * The `x-mcp-header` declarations of a tool's `inputSchema`, in schema order; `undefined` when the
 * schema breaks a rule of the annotation ([E31]), which voids every declaration of the tool: a
 * name that is empty or not a token, or used twice (ignoring case); a property that is not of a
 * primitive type; an annotation not reached from the root through `properties` alone (under
 * `items`, `oneOf`, `$defs` and the like, or on the root itself).
 */
export function scanParamHeaders(schema: unknown): readonly ParamHeader[] | undefined {
  const found: ParamHeader[] = [];
  const names = new Set<string>();
  // `path` is the property path from the root, `undefined` once off the `properties` chain.
  const visit = (node: unknown, path: readonly string[] | undefined, depth: number): boolean => {
    if (depth > MAX_DEPTH) return false;
    if (Array.isArray(node)) return node.every((item) => visit(item, undefined, depth + 1));
    if (!isObject(node)) return true;
    if (Object.hasOwn(node, ANNOTATION)) {
      const name = node[ANNOTATION];
      if (path === undefined || path.length === 0 || typeof name !== 'string' || !TOKEN.test(name)) return false;
      if (!primitive(node.type) || names.has(name.toLowerCase())) return false;
      names.add(name.toLowerCase());
      found.push({ name, path });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === ANNOTATION || INSTANCE_KEYWORDS.has(key)) continue;
      if (key !== 'properties' || !isObject(value)) {
        if (!visit(value, undefined, depth + 1)) return false;
        continue;
      }
      for (const [property, sub] of Object.entries(value)) {
        if (!visit(sub, path === undefined ? undefined : [...path, property], depth + 1)) return false;
      }
    }
    return true;
  };
  return visit(schema, [], 0) ? found : undefined;
}

/** A value that may go into a header as it is: visible ASCII and inner spaces, not the sentinel's shape. */
const PLAIN = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

/** The UTF-8 bytes of `text` in Base64. */
function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * A value as a header carries it ([E31]): a string as it is, an integer in decimal, a boolean as
 * `true`/`false`; a string that is not plain visible ASCII (non-ASCII, a control character, a tab,
 * space at either end), or that looks like the sentinel itself, as `=?base64?<UTF-8 in Base64>?=`.
 * `undefined` for anything else (null, absent, a fraction, an object): no header.
 */
export function headerValue(value: unknown): string | undefined {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const sentinel = value.startsWith('=?base64?') && value.endsWith('?=');
  return PLAIN.test(value) && !sentinel ? value : `=?base64?${base64(value)}?=`;
}

/**
 * The `Mcp-Param-{Name}` headers of a call with `args`, one per declaration whose value is
 * present ([E31]: a missing or null value sends none); `undefined` when there are none.
 */
export function paramHeaders(
  declared: readonly ParamHeader[],
  args: Readonly<Record<string, unknown>> | undefined,
): Record<string, string> | undefined {
  let headers: Record<string, string> | undefined;
  for (const { name, path } of declared) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    const text = headerValue(value);
    if (text !== undefined) (headers ??= {})[`Mcp-Param-${name}`] = text;
  }
  return headers;
}
