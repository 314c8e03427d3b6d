/**
 * The fields of an elicitation's `requestedSchema` (a flat object of primitive properties), and
 * the checks a typed answer must pass: required fields, number and integer bounds, string
 * lengths and the `email`, `uri`, `date` and `date-time` formats. Pure, so it is unit-tested
 * without a terminal.
 */

/** A choice of a select. */
export interface Choice {
  readonly value: string;
  readonly label: string;
}

interface FieldBase {
  /** The property name. */
  readonly key: string;
  /** The title, or the property name. */
  readonly label: string;
  readonly description: string | undefined;
  readonly required: boolean;
}

/** One form field, by the prompt it becomes. */
export type Field =
  | (FieldBase & { readonly kind: 'select'; readonly choices: readonly Choice[]; readonly default: string | undefined })
  | (FieldBase & {
      readonly kind: 'multiselect';
      readonly choices: readonly Choice[];
      readonly minItems: number | undefined;
      readonly maxItems: number | undefined;
      readonly default: readonly string[] | undefined;
    })
  | (FieldBase & { readonly kind: 'confirm'; readonly default: boolean | undefined })
  | (FieldBase & {
      readonly kind: 'number';
      readonly integer: boolean;
      readonly minimum: number | undefined;
      readonly maximum: number | undefined;
      readonly default: number | undefined;
    })
  | (FieldBase & {
      readonly kind: 'text';
      readonly format: string | undefined;
      readonly minLength: number | undefined;
      readonly maxLength: number | undefined;
      readonly default: string | undefined;
    });

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;

/** Choices from `enum` (+ `enumNames`) or from `oneOf`/`anyOf` `{ const, title }` entries. */
function choicesOf(def: Json): Choice[] | undefined {
  const values = strings(def.enum);
  if (values !== undefined) {
    const names = strings(def.enumNames);
    return values.map((value, i) => ({ value, label: names?.[i] ?? value }));
  }
  const titled = Array.isArray(def.oneOf) ? def.oneOf : Array.isArray(def.anyOf) ? def.anyOf : undefined;
  if (titled === undefined) return undefined;
  return titled.filter(isObject).flatMap((entry) => {
    const value = str(entry.const);
    return value === undefined ? [] : [{ value, label: str(entry.title) ?? value }];
  });
}

/** The fields of a `requestedSchema`, in property order. Unknown property shapes become text fields. */
export function fieldsOf(schema: unknown): Field[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = new Set(strings(schema.required) ?? []);
  return Object.entries(schema.properties).map(([key, raw]): Field => {
    const def = isObject(raw) ? raw : {};
    const base: FieldBase = {
      key,
      label: str(def.title) ?? key,
      description: str(def.description),
      required: required.has(key),
    };
    if (def.type === 'array') {
      const items = isObject(def.items) ? def.items : {};
      return {
        ...base,
        kind: 'multiselect',
        choices: choicesOf(items) ?? [],
        minItems: num(def.minItems),
        maxItems: num(def.maxItems),
        default: strings(def.default),
      };
    }
    const choices = choicesOf(def);
    if (choices !== undefined) return { ...base, kind: 'select', choices, default: str(def.default) };
    if (def.type === 'boolean')
      return { ...base, kind: 'confirm', default: typeof def.default === 'boolean' ? def.default : undefined };
    if (def.type === 'number' || def.type === 'integer') {
      return {
        ...base,
        kind: 'number',
        integer: def.type === 'integer',
        minimum: num(def.minimum),
        maximum: num(def.maximum),
        default: num(def.default),
      };
    }
    return {
      ...base,
      kind: 'text',
      format: str(def.format),
      minLength: num(def.minLength),
      maxLength: num(def.maxLength),
      default: str(def.default),
    };
  });
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

function validDate(text: string): boolean {
  const match = DATE.exec(text);
  if (match === null) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

function validUri(text: string): boolean {
  try {
    return /^[a-z][a-z0-9+.-]*:/i.test(text) && new URL(text).protocol !== '';
  } catch {
    return false;
  }
}

/** Why `raw` is not a valid answer for a number field; `undefined` when it is. Empty means "no answer". */
export function checkNumber(field: Extract<Field, { kind: 'number' }>, raw: string): string | undefined {
  const text = raw.trim();
  if (text === '') return field.required ? `${field.label} is required` : undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return 'Enter a number';
  if (field.integer && !Number.isInteger(value)) return 'Enter a whole number';
  if (field.minimum !== undefined && value < field.minimum) return `Must be at least ${field.minimum}`;
  if (field.maximum !== undefined && value > field.maximum) return `Must be at most ${field.maximum}`;
  return undefined;
}

/** Why `raw` is not a valid answer for a text field; `undefined` when it is. Empty means "no answer". */
export function checkText(field: Extract<Field, { kind: 'text' }>, raw: string): string | undefined {
  if (raw === '') return field.required ? `${field.label} is required` : undefined;
  if (field.minLength !== undefined && [...raw].length < field.minLength)
    return `At least ${field.minLength} characters`;
  if (field.maxLength !== undefined && [...raw].length > field.maxLength)
    return `At most ${field.maxLength} characters`;
  switch (field.format) {
    case 'email':
      return EMAIL.test(raw) ? undefined : 'Enter an email address (name@example.com)';
    case 'uri':
      return validUri(raw) ? undefined : 'Enter an absolute URI (https://…)';
    case 'date':
      return validDate(raw) ? undefined : 'Enter a date as YYYY-MM-DD';
    case 'date-time':
      // The date part checked as `date` is: Date.parse rolls 2026-02-30 over to March.
      return DATE_TIME.test(raw) && validDate(raw.slice(0, 10)) && Number.isFinite(Date.parse(raw))
        ? undefined
        : 'Enter a date-time as YYYY-MM-DDThh:mm:ssZ';
    default:
      return undefined;
  }
}

/** Why a multiselect answer is invalid; `undefined` when it is fine. */
export function checkSelection(
  field: Extract<Field, { kind: 'multiselect' }>,
  values: readonly string[],
): string | undefined {
  if (values.length === 0 && field.required) return `${field.label} is required`;
  // An optional field with nothing chosen is left out: its bounds apply to an answer given.
  if (values.length === 0) return undefined;
  if (field.minItems !== undefined && values.length < field.minItems) return `Choose at least ${field.minItems}`;
  if (field.maxItems !== undefined && values.length > field.maxItems) return `Choose at most ${field.maxItems}`;
  return undefined;
}

/** A field's hint: its description, bounds and format, e.g. `1-5` or `email`. */
export function hintOf(field: Field): string {
  const parts: string[] = [];
  if (field.kind === 'number') {
    if (field.minimum !== undefined && field.maximum !== undefined) parts.push(`${field.minimum}-${field.maximum}`);
    else if (field.minimum !== undefined) parts.push(`>= ${field.minimum}`);
    else if (field.maximum !== undefined) parts.push(`<= ${field.maximum}`);
    if (field.integer) parts.push('integer');
  }
  if (field.kind === 'text' && field.format !== undefined) parts.push(field.format);
  if (!field.required) parts.push('optional');
  return parts.join(', ');
}
