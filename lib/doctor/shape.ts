/**
 * Reading raw server messages the way the doctor reports them: task fields as sent (present or
 * not, whatever their type), timestamp precision, error replies in a few words with task ids
 * left out, and durations.
 */
import type { JsonObject } from '../types.js';
import { usableTaskId } from '../wire/decode.js';
import type { DoctorWire } from './types.js';

/** True for a plain JSON object. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A task object as the server sent it. */
export interface SeenTask {
  /** The task id, when it is one the library accepts (a non-empty string, not overlong). */
  readonly taskId: string | undefined;
  readonly status: string | undefined;
  readonly statusMessage: string | undefined;
  readonly createdAt: unknown;
  readonly lastUpdatedAt: unknown;
  /** Whether the ttl key is there at all, and its value. */
  readonly hasTtl: boolean;
  readonly ttl: unknown;
  readonly pollInterval: unknown;
  readonly raw: JsonObject;
}

/** The field names of each wire. */
const NAMES: Record<DoctorWire, { ttl: string; pollInterval: string }> = {
  '2025-11-25': { ttl: 'ttl', pollInterval: 'pollInterval' },
  'io.modelcontextprotocol/tasks': { ttl: 'ttlMs', pollInterval: 'pollIntervalMs' },
};

/** Reads a task object of `wire` without judging it. */
export function seenTask(raw: JsonObject, wire: DoctorWire): SeenTask {
  const names = NAMES[wire];
  return {
    // The library's own rule ([R33]): an empty (or overlong) id names no task, so no request carries it.
    taskId: usableTaskId(raw.taskId),
    status: typeof raw.status === 'string' ? raw.status : undefined,
    statusMessage: typeof raw.statusMessage === 'string' ? raw.statusMessage : undefined,
    createdAt: raw.createdAt,
    lastUpdatedAt: raw.lastUpdatedAt,
    hasTtl: Object.hasOwn(raw, names.ttl),
    ttl: raw[names.ttl],
    pollInterval: raw[names.pollInterval],
    raw,
  };
}

/** The wire name of the ttl field. */
export function ttlField(wire: DoctorWire): string {
  return NAMES[wire].ttl;
}

/** The wire name of the poll interval field. */
export function pollField(wire: DoctorWire): string {
  return NAMES[wire].pollInterval;
}

export const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** True for a terminal status. */
export function isTerminal(status: string | undefined): boolean {
  return status !== undefined && TERMINAL.has(status);
}

/** RFC 3339 date-time (the ISO 8601 profile the spec links to). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.(\d+))?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** The precision of an ISO 8601 timestamp, or `undefined` when `value` is not one. */
export function precisionOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = RFC3339.exec(value);
  if (match === null || Number.isNaN(Date.parse(value))) return undefined;
  const digits = match[1]?.length ?? 0;
  if (digits === 0) return 'whole seconds';
  if (digits <= 3) return 'milliseconds';
  if (digits <= 6) return 'microseconds';
  return 'nanoseconds';
}

/** A non-negative number, or `undefined`. */
export function durationOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** `ms` in words: `850 ms`, `2.3 s`. */
export function ms(value: number): string {
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10_000 ? 1 : 0)} s`;
}

/** A ttl value in words: `60000 ms`, `null (unlimited)`, or what it is. */
export function ttlWords(value: unknown): string {
  if (value === null) return 'null (unlimited)';
  if (typeof value === 'number') return `${value} ms`;
  return `${JSON.stringify(value) ?? 'undefined'}`;
}

/** `text` cut to `max` characters. */
export function cut(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Longest server or tool name a report's text quotes, in characters (an escape counts its own). */
const MAX_NAME = 64;
/** C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex
const NAME_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
const ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A name the server gave (its own name and version, a tool's name) as a report's text quotes it:
 * on one line, every control character escaped (`\n`, `\u001b`), and cut to {@link MAX_NAME}
 * characters with `…`, never inside an escape or a character. A name is the server's, untrusted:
 * a long or multi-line one must not take over a headline, a note or a table cell. The report's own
 * fields (`server.name`, a wire's `tool`) keep it whole.
 */
export function nameText(name: string): string {
  const pieces: string[] = [];
  let length = 0;
  for (const ch of name) {
    const piece = NAME_CONTROL.test(ch) ? (ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : ch;
    pieces.push(piece);
    length += piece.length;
  }
  if (length <= MAX_NAME) return pieces.join('');
  let out = '';
  for (const piece of pieces) {
    if (out.length + piece.length > MAX_NAME - 1) break;
    out += piece;
  }
  return `${out}…`;
}

/** Longest run of characters without a space that a report quotes from the server (a value of its in a row). */
const MAX_WORD = 120;
/** Longest text of a row or note (the doctor's own sentences are far shorter). */
const MAX_TEXT = 1_000;
const LONG_WORD = new RegExp(`\\S{${MAX_WORD + 1},}`, 'gu');

/**
 * What the doctor saw, fit for the report: the task ids of `ids` replaced by `<task>` ([V4]: a
 * server may echo one in any field it sends), every run longer than {@link MAX_WORD} characters
 * without a space cut, and the whole cut to {@link MAX_TEXT}: a row quotes server values (a
 * status, a timestamp, a ttl, a reply's fields), and a hostile server's 100 kB string must not
 * become a 100 kB cell of the table or the JSON.
 */
export function reportable(text: string, ids: Iterable<string>): string {
  const words = withoutIds(text, ids).replace(LONG_WORD, (word) => cut(word, MAX_WORD));
  return cut(words, MAX_TEXT);
}

/** `text` with every id of `ids` replaced by `<task>` (task ids are secrets; servers repeat them in messages). */
export function withoutIds(text: string, ids: Iterable<string>): string {
  let out = text;
  for (const id of ids) if (id.length >= 4) out = out.split(id).join('<task>');
  return out;
}
