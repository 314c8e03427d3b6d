/**
 * The `Mcp-Param-{Name}` headers of a `tools/call` over Streamable HTTP on the modern era ([E32]).
 * A tool's `inputSchema` may mark a property with `x-mcp-header: "<Name>"`; the call's value of
 * that property then goes into a header too, so that proxies can route on it without reading the
 * body, and the server checks that the two agree ([E33]). Pure functions: {@link scanParamHeaders}
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
const TOKEN = /^[!#$%&\x27*+\-.^_\x60|~\w]+$/; // ' and ` escaped: bench/size.ts reads quotes as strings
/** The types a mirrored property may have (`number` is not one of them). */
const PRIMITIVE = /^(string|integer|boolean)$/;
/** Keywords holding one subschema or a list of them; only these are walked ([E32]). */
const SUBSCHEMA =
  /^(items|prefixItems|contains|additionalItems|unevaluatedItems|additionalProperties|unevaluatedProperties|propertyNames|allOf|anyOf|oneOf|not|if|then|else)$/;
/** Keywords holding a `name → subschema` map (`properties`, the path's chain, apart). */
const SUBSCHEMA_MAP = /^(patternProperties|dependentSchemas|dependencies|\$defs|definitions)$/;
/** How deep, and how many schemas, a scan looks at: past either it stops descending, not failing. */
const MAX_DEPTH = 64;
const MAX_NODES = 4096;

/**
 * The `x-mcp-header` declarations of a tool's `inputSchema`, in schema order; `undefined` when the
 * schema breaks a rule of the annotation ([E32]), which voids every declaration of the tool: a
 * name that is empty or not a token, or used twice (ignoring case); a property whose `type` is
 * not `string`, `integer` or `boolean`; an annotation not reached from the root through
 * `properties` alone (under `items`, `oneOf`, `$defs` (what a `$ref` points to) and the like, or
 * on the root itself). Only JSON Schema keywords that hold subschemas are walked: an annotation
 * inside `default`, `examples` or a vendor keyword is data. The walk is bounded (64 levels, 4096
 * schemas): past that it stops descending, and a declaration hidden there is not found (the
 * server refuses a call that needed it with -32020, which the client re-lists for, then reports).
 */
export function scanParamHeaders(schema: unknown): readonly ParamHeader[] | undefined {
  const found: ParamHeader[] = [];
  const names = new Set<string>();
  let nodes = 0;
  // `path` is the property path from the root, `undefined` once off the `properties` chain.
  const visit = (node: unknown, path: readonly string[] | undefined, depth: number): boolean => {
    if (!isObject(node) || depth > MAX_DEPTH || ++nodes > MAX_NODES) return true;
    if (Object.hasOwn(node, ANNOTATION)) {
      const name = node[ANNOTATION];
      const type = node.type;
      if (path === undefined || path.length === 0 || typeof name !== 'string' || typeof type !== 'string') return false;
      if (!TOKEN.test(name) || !PRIMITIVE.test(type) || names.has(name.toLowerCase())) return false;
      names.add(name.toLowerCase());
      found.push({ name, path });
    }
    return Object.entries(node).every(([key, value]) =>
      key === 'properties' || SUBSCHEMA_MAP.test(key)
        ? !isObject(value) ||
          Object.entries(value).every(([property, sub]) =>
            visit(sub, key === 'properties' ? path && [...path, property] : undefined, depth + 1),
          )
        : !SUBSCHEMA.test(key) || [value].flat().every((sub) => visit(sub, undefined, depth + 1)),
    );
  };
  return visit(schema, [], 0) ? found : undefined;
}

/**
 * A value that may go into a header as it is: visible ASCII with inner spaces. Not the empty
 * string: RFC 9110 allows an empty field value, but an empty header is easily taken for a missing
 * one (the server must then refuse), so it goes as the sentinel, `=?base64??=`, as SDK v2 sends it.
 */
const PLAIN = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * A value as a header carries it ([E32]): a string as it is, an integer in decimal, a boolean as
 * `true`/`false`; a string that is not plain visible ASCII (non-ASCII, a control character, a tab,
 * space at either end, empty), or that looks like the sentinel itself, as `=?base64?<UTF-8 in Base64>?=`.
 * `undefined` for anything else (null, absent, a fraction, an object): no header.
 */
export function headerValue(value: unknown): string | undefined {
  if (typeof value === 'boolean' || Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  if (PLAIN.test(value) && !/^=\?base64\?.*\?=$/.test(value)) return value;
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

/**
 * The `Mcp-Param-{Name}` headers of a call with `args`, one per declaration whose value is
 * present ([E32]: a missing or null value sends none); `undefined` when there are none.
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
