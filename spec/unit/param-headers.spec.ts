/**
 * The `x-mcp-header` scan and the `Mcp-Param-*` value encoding ([E32]) on the transport spec's own
 * examples and on the invalid declarations the conformance suite serves. The end-to-end behaviour
 * is in spec/ext/param-headers.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { headerValue, paramHeaders, scanParamHeaders } from '../../lib/port/param-headers.js';

const property = (type: unknown, header: unknown): Record<string, unknown> => ({ type, 'x-mcp-header': header });
const schemaOf = (properties: Record<string, unknown>): Record<string, unknown> => ({ type: 'object', properties });

describe('value encoding ([E32])', () => {
  it.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    ['us west 1', 'us west 1'],
    ['\tindented', `=?base64?${btoa('\tindented')}?=`],
    ['trailing ', `=?base64?${btoa('trailing ')}?=`],
    // RFC 9110 allows an empty field value, but an empty header reads as a missing one: the sentinel.
    ['', '=?base64??='],
  ])('string %j is sent as %j', (value, sent) => {
    expect(headerValue(value)).toBe(sent);
  });

  it('sends integers in decimal and booleans in lower case; nothing for null, fractions, unsafe integers or objects', () => {
    expect([42, -7, true, false].map(headerValue)).toEqual(['42', '-7', 'true', 'false']);
    expect([null, undefined, 3.5, 2 ** 53, {}, ['a']].map(headerValue)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('x-mcp-header declarations ([E32])', () => {
  it('finds the spec example’s declaration and builds its header', () => {
    const schema = {
      type: 'object',
      properties: {
        region: { type: 'string', description: 'The region', 'x-mcp-header': 'Region' },
        query: { type: 'string' },
      },
      required: ['region', 'query'],
    };
    const declared = scanParamHeaders(schema)!;
    expect(declared).toEqual([{ name: 'Region', path: ['region'] }]);
    expect(paramHeaders(declared, { region: 'us-west1', query: 'SELECT * FROM users' })).toEqual({
      'Mcp-Param-Region': 'us-west1',
    });
  });

  it('follows nested properties, and omits a missing or null value', () => {
    const schema = schemaOf({
      target: { type: 'object', properties: { zone: property('string', 'Zone'), id: property('integer', 'Id') } },
      flag: property('boolean', 'Flag'),
    });
    const declared = scanParamHeaders(schema)!;
    expect(declared.map((each) => each.path)).toEqual([['target', 'zone'], ['target', 'id'], ['flag']]);
    expect(paramHeaders(declared, { target: { zone: 'a', id: 3 }, flag: null })).toEqual({
      'Mcp-Param-Zone': 'a',
      'Mcp-Param-Id': '3',
    });
    expect(paramHeaders(declared, { target: 'not an object' })).toBeUndefined();
    expect(paramHeaders(declared, undefined)).toBeUndefined();
  });

  it('finds none in a schema without declarations, and ignores a key named like one inside instance values', () => {
    expect(scanParamHeaders({ type: 'object' })).toEqual([]);
    expect(scanParamHeaders(undefined)).toEqual([]);
    const schema = schemaOf({ x: { type: 'object', default: { 'x-mcp-header': 'Nope' } } });
    expect(scanParamHeaders(schema)).toEqual([]);
  });

  it('ignores a key named like one under a vendor keyword or any keyword that holds no subschema', () => {
    const valid = schemaOf({ region: property('string', 'Zone') });
    for (const key of ['x-vendor', 'x-mcp-header-extra', 'examples', 'const', 'enum', 'title', 'format']) {
      const schema = { ...valid, [key]: { 'x-mcp-header': 'A', nested: [{ 'x-mcp-header': 'B' }] } };
      expect(scanParamHeaders(schema), key).toEqual([{ name: 'Zone', path: ['region'] }]);
    }
    const inProperty = schemaOf({ region: { ...property('string', 'Zone'), 'x-vendor': property('string', 'V') } });
    expect(scanParamHeaders(inProperty)).toEqual([{ name: 'Zone', path: ['region'] }]);
  });

  it('stops descending past 64 levels instead of voiding a deep schema without declarations', () => {
    let nested: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 70; level += 1) nested = schemaOf({ next: nested });
    expect(scanParamHeaders(nested)).toEqual([]);
    let wrapped: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 33; level += 1) wrapped = { anyOf: [wrapped, { type: 'null' }] };
    expect(scanParamHeaders(schemaOf({ value: wrapped, region: property('string', 'Zone') }))).toEqual([
      { name: 'Zone', path: ['region'] },
    ]);
    // A declaration within the bound is still found at any depth up to it.
    let shallow: Record<string, unknown> = property('string', 'Deep');
    for (let level = 0; level < 30; level += 1) shallow = schemaOf({ next: shallow });
    expect(scanParamHeaders(shallow)?.[0]?.path).toHaveLength(30);
  });

  it('keeps a hostile schema cheap: past a few thousand schemas it stops descending', () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(scanParamHeaders(schemaOf({ ...wide, last: property('number', 'Late') }))).toEqual([]);
    // Shared subschemas (no cycle, but 2^60 paths): without the bound, the scan would never end.
    let shared: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 60; level += 1) shared = { allOf: [shared, shared] };
    expect(scanParamHeaders(schemaOf({ value: shared }))).toEqual([]);
  });

  it.each([
    ['an empty name', schemaOf({ value: property('string', '') })],
    ['a name that is not a string', schemaOf({ value: property('string', 7) })],
    ['an object property', schemaOf({ data: property('object', 'Data') })],
    ['an array property', schemaOf({ items: property('array', 'Items') })],
    ['a null property', schemaOf({ nil: property('null', 'Nil') })],
    ['a number property', schemaOf({ ratio: property('number', 'Ratio') })],
    ['a property without a type', schemaOf({ any: { 'x-mcp-header': 'Any' } })],
    ['a list of types', schemaOf({ maybe: property(['string', 'null'], 'Maybe') })],
    ['the same name twice', schemaOf({ a: property('string', 'Region'), b: property('string', 'Region') })],
    ['names differing in case only', schemaOf({ a: property('string', 'MyField'), b: property('string', 'myfield') })],
    ['a space in the name', schemaOf({ value: property('string', 'My Region') })],
    ['a colon in the name', schemaOf({ value: property('string', 'Region:Primary') })],
    ['a non-ASCII name', schemaOf({ value: property('string', 'Région') })],
    ['a control character in the name', schemaOf({ value: property('string', 'Region\t1') })],
    ['the root itself', { type: 'string', 'x-mcp-header': 'Root' }],
    ['under items', schemaOf({ list: { type: 'array', items: property('string', 'Item') } })],
    ['under oneOf', { type: 'object', oneOf: [schemaOf({ a: property('string', 'A') })] }],
    [
      'under $defs',
      { type: 'object', $defs: { a: property('string', 'A') }, properties: { a: { $ref: '#/$defs/a' } } },
    ],
    ['under definitions', { type: 'object', definitions: { a: property('string', 'A') } }],
    ['under additionalProperties', { type: 'object', additionalProperties: property('string', 'A') }],
    ['under patternProperties', { type: 'object', patternProperties: { '^a': property('string', 'A') } }],
    [
      'under prefixItems',
      schemaOf({ t: { type: 'array', prefixItems: [{ type: 'integer' }, property('string', 'A')] } }),
    ],
    ['under a draft-7 tuple of items', schemaOf({ t: { type: 'array', items: [property('string', 'A')] } })],
    ['under dependentSchemas', { type: 'object', dependentSchemas: { a: schemaOf({ b: property('string', 'A') }) } }],
    ['under dependencies', { type: 'object', dependencies: { a: ['b'], c: schemaOf({ d: property('string', 'A') }) } }],
    ['under if/then/else', { type: 'object', if: {}, then: {}, else: schemaOf({ b: property('string', 'A') }) }],
    ['under not', { type: 'object', not: schemaOf({ b: property('string', 'A') }) }],
  ])('voids every declaration of a schema with %s', (_what, schema: Record<string, unknown>) => {
    const valid = schemaOf({ region: property('string', 'Zone') });
    expect(scanParamHeaders(valid)).toHaveLength(1);
    expect(
      scanParamHeaders({
        ...schema,
        properties: { ...(schema.properties as object), ...(valid.properties as object) },
      }),
    ).toBeUndefined();
  });
});
