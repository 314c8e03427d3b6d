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
    ['', ''],
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
