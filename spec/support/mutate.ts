/**
 * The fuzz specs' mutations of valid JSON (spec/wire/fuzz.spec.ts and spec/doctor/fuzz.spec.ts):
 * one implementation, drawn from a seeded {@link Rng}. Each fuzzer passes its own tables
 * ({@link Mutations}); what a seed draws depends on them, in their order, so a fuzzer's seeds keep
 * their cases as long as its tables stay as they are (a regression seed means what it does for
 * one version of its fuzzer's tables).
 */
import type { Rng } from './seeded.js';

type Json = Record<string, unknown>;

/** A path into a JSON value: object keys and array indexes. */
export type Path = ReadonlyArray<string | number>;

/** What a fuzzer mutates with (each table is drawn from in its order). */
export interface Mutations {
  /** Paths deeper than this many levels below the root are not mutated. */
  readonly depth: number;
  /** The chance that the whole value is replaced by a non-object (or an array holding it). */
  readonly replaced: number;
  /** A very long string (a field set long, an extra field's or an error's value). */
  readonly long: string;
  /** How many emoji make the other long string (each a surrogate pair). */
  readonly emoji: number;
  /** Odd numbers (and numbers as odd strings) a field may be set to. */
  readonly numbers: readonly unknown[];
  /** Odd statuses a `status` field may be set to. */
  readonly statuses: readonly unknown[];
  /** Values of an extra field (JSON; each use gets a copy). */
  readonly extras: readonly unknown[];
  /** A JSON-RPC error's odd codes, messages and data ({@link oddError}; `undefined` data: none). */
  readonly codes: readonly unknown[];
  readonly messages: readonly unknown[];
  readonly data: readonly unknown[];
}

/** Keys an extra field may have (those a careless reader trips on included). */
export const EXTRA_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'then', 'extra', 'valueOf'];

/** What may happen to a reply the fuzzer hits (a mutation most often). */
export const REPLY_FAULTS = [
  'mutate',
  'mutate',
  'mutate',
  'mutate',
  'error',
  'error',
  'duplicate',
  'late',
  'withheld',
  'unsolicited',
  'envelope',
] as const;
export type ReplyFault = (typeof REPLY_FAULTS)[number];

/** `value` as JSON, cut to `max` characters (with its length said). */
export function shortJson(value: unknown, max: number): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}

/** Every path into `value` (`depth` levels at most), the root excluded. */
export function paths(value: unknown, depth: number, prefix: Path = []): Path[] {
  if (prefix.length >= depth || typeof value !== 'object' || value === null) return [];
  const out: Path[] = [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value as Json);
  for (const [key, child] of entries) {
    const path = [...prefix, key];
    out.push(path, ...paths(child, depth, path));
  }
  return out;
}

export function getAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node;
}

/** Sets (or with `remove`, removes) what `path` names; a `__proto__` key becomes an own field. */
export function setAt(root: unknown, path: Path, value: unknown, remove = false): void {
  const parent = getAt(root, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path[path.length - 1]!;
  if (remove) {
    if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
    else delete parent[key];
  } else if (key === '__proto__')
    Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
  else parent[key] = value;
}

/** A value of another JSON type than `value`. */
export function wrongType(value: unknown, rng: Rng): unknown {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return rng.pick([value.length, 42, true, [value], { value }]);
  if (Array.isArray(value)) return rng.pick([{ ...value }, 'array', value.length]);
  if (typeof value === 'object' && value !== null) return rng.pick([[value], 'object', 1]);
  if (typeof value === 'boolean') return rng.pick([String(value), Number(value)]);
  return rng.pick([true, 0, 'null', {}]);
}

/**
 * Mutates a copy of a valid JSON value (`undefined` reads as `{}`) at one or two random places: a
 * field dropped, null, of the wrong type, an odd number, a long string, an odd status, an extra
 * field, a `taskId` set to one of `otherIds` or to an odd one, a boolean; or the whole value
 * replaced. Returns it and a label for the trace.
 */
export function mutateValue(
  valid: unknown,
  rng: Rng,
  otherIds: readonly string[],
  tables: Mutations,
): { value: unknown; label: string } {
  if (rng.chance(tables.replaced)) {
    const value = rng.pick<unknown>([null, 42, 'str', [], true, [valid]]);
    return { value, label: `replaced by ${JSON.stringify(value)?.slice(0, 60)}` };
  }
  const value = JSON.parse(JSON.stringify(valid ?? {})) as unknown;
  const labels: string[] = [];
  const rounds = rng.chance(0.25) ? 2 : 1;
  for (let round = 0; round < rounds; round += 1) {
    const all = paths(value, tables.depth);
    const kind = rng.pick(['drop', 'null', 'type', 'number', 'long', 'status', 'extra', 'taskId', 'bool'] as const);
    if (kind === 'extra' || all.length === 0) {
      const key = rng.pick(EXTRA_KEYS);
      // A copy: a second round may mutate inside it.
      const extra = structuredClone(rng.pick(tables.extras));
      if (typeof value === 'object' && value !== null) setAt({ root: value }, ['root', key], extra);
      labels.push(`extra ${key}=${JSON.stringify(extra)?.slice(0, 40)}`);
      continue;
    }
    const named = (name: string): Path[] => all.filter((p) => p[p.length - 1] === name);
    let path = rng.pick(all);
    if (kind === 'status' && named('status').length > 0) path = rng.pick(named('status'));
    if (kind === 'taskId' && named('taskId').length > 0) path = rng.pick(named('taskId'));
    const where = path.join('.');
    const set = (next: unknown, label: string): void => {
      setAt(value, path, next);
      labels.push(`${kind} ${where}${label}`);
    };
    switch (kind) {
      case 'drop':
        setAt(value, path, undefined, true);
        labels.push(`drop ${where}`);
        break;
      case 'null':
        set(null, '');
        break;
      case 'type': {
        const next = wrongType(getAt(value, path), rng);
        set(next, `=${JSON.stringify(next)?.slice(0, 40)}`);
        break;
      }
      case 'number':
      case 'status': {
        const next = rng.pick(kind === 'number' ? tables.numbers : tables.statuses);
        set(next, `=${JSON.stringify(next)}`);
        break;
      }
      case 'long':
        set(rng.chance(0.5) ? tables.long : '\u{1F600}'.repeat(tables.emoji), '');
        break;
      case 'taskId': {
        const next = rng.pick<unknown>([...otherIds, '', 'task-999', 42]);
        set(next, `=${JSON.stringify(next)}`);
        break;
      }
      case 'bool': {
        const next = rng.pick([true, false]);
        set(next, `=${String(next)}`);
        break;
      }
    }
  }
  return { value, label: labels.join(', ') };
}

/** An odd JSON-RPC error object (its code or message sometimes missing). */
export function oddError(rng: Rng, tables: Mutations): Json {
  const error: Json = { code: rng.pick(tables.codes), message: rng.pick(tables.messages) };
  const data = rng.pick(tables.data);
  if (data !== undefined) error.data = data;
  if (rng.chance(0.1)) delete error.message;
  if (rng.chance(0.1)) delete error.code;
  return error;
}

/** {@link mutateValue} and {@link oddError} bound to a fuzzer's tables. */
export function mutator(tables: Mutations): {
  readonly mutateValue: (valid: unknown, rng: Rng, otherIds: readonly string[]) => { value: unknown; label: string };
  readonly oddError: (rng: Rng) => Json;
} {
  return {
    mutateValue: (valid, rng, otherIds) => mutateValue(valid, rng, otherIds, tables),
    oddError: (rng) => oddError(rng, tables),
  };
}
