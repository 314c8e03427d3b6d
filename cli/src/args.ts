/**
 * Parsing of the CLI's own argument syntax: durations, `key=value` tool arguments, headers and
 * stdio command lines. Every malformed value is a {@link UsageError} (exit code 2).
 */

/** A mistake in how the CLI was invoked; exits with code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * The longest delay Node's timers honour (2^31 - 1 ms, about 24.8 days): `setTimeout` runs a
 * longer one after 1 ms instead (with a `TimeoutOverflowWarning`).
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Parses a duration: `500ms`, `30s`, `5m`, `1h`, or a bare number of seconds (`2.5` = 2500 ms).
 * @param maxMs the longest duration accepted (e.g. {@link MAX_TIMER_MS} for one a timer waits out).
 * @param zero whether 0 is accepted (`--connect-timeout 0`: no limit); a duration above 0 that
 *   rounds below 1 ms (`0.4ms`) never is: it would read as 0.
 * @returns milliseconds.
 * @throws UsageError for anything else, a negative or non-finite value, one above `maxMs`, 0
 *   when `zero` is false, or one that rounds below 1 ms.
 */
export function parseDuration(text: string, option: string, maxMs = Number.MAX_SAFE_INTEGER, zero = true): number {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (match === null) {
    throw new UsageError(`${option} expects a duration such as 500ms, 30s, 5m or a number of seconds, got "${text}"`);
  }
  const value = Math.round(Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1_000));
  if (!Number.isFinite(value)) throw new UsageError(`${option}: "${text}" is out of range`);
  if (value === 0 && (!zero || Number(match[1]) > 0)) {
    throw new UsageError(`${option} must be at least 1ms, got "${text}"`);
  }
  if (value > maxMs) {
    const days = Math.floor((maxMs / 86_400_000) * 10) / 10;
    throw new UsageError(`${option}: "${text}" is too long; the longest is ${maxMs} ms (about ${days} days)`);
  }
  return value;
}

/**
 * A `key=value` value: JSON when it parses (`7`, `true`, `[1,2]`, `"7"`), else the raw string. A
 * number too large for a double (`1e400`) would be sent as `null`, and a whole number beyond 2^53
 * (`12345678901234567890`, an id) as another number (`12345678901234567000`): the raw string is
 * kept then, never a value other than the one typed.
 */
function parseValue(raw: string): unknown {
  let finite = true;
  try {
    const value = JSON.parse(raw, (_key, item: unknown) => {
      if (typeof item === 'number' && !Number.isFinite(item)) finite = false;
      return item;
    }) as unknown;
    if (typeof value === 'number' && /^-?\d+$/.test(raw.trim()) && !Number.isSafeInteger(value)) return raw;
    return finite ? value : raw;
  } catch {
    return raw;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sets `key` as an own property of `target`. Plain assignment would not do for every key:
 * `target["__proto__"] = v` changes the prototype instead of adding an argument.
 */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Builds tool arguments from `--args JSON` (an object; several are merged in order) and
 * `key=value` pairs (which override it). Every key is an argument like any other, `__proto__`
 * included.
 * @param option the option's name in error messages.
 * @throws UsageError for a pair without `=`, an empty key, or `--args` that is not a JSON object.
 */
export function parseToolArgs(
  pairs: readonly string[],
  json: string | readonly string[] | undefined,
  option = '--args',
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const text of json === undefined ? [] : typeof json === 'string' ? [json] : json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${option} is not valid JSON: ${(error as Error).message}`);
    }
    if (!isPlainObject(parsed)) throw new UsageError(`${option} must be a JSON object`);
    for (const [key, value] of Object.entries(parsed)) setOwn(args, key, value);
  }
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`Tool arguments are key=value pairs, got "${pair}"`);
    setOwn(args, pair.slice(0, at), parseValue(pair.slice(at + 1)));
  }
  return args;
}

/** An HTTP header name: one or more token characters (RFC 9110 §5.1). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a header value cannot hold: NUL, CR, LF, and characters beyond Latin-1 (fetch sends byte strings). */
// eslint-disable-next-line no-control-regex
const BAD_HEADER_VALUE = /[\0\r\n]|[^\u0000-\u00ff]/;

/**
 * A malformed `--header` entry as an error may show it: its first word only, up to a separator
 * (`Authorization` of `Authorization Bearer sk-…`), since the rest may be a secret.
 */
function headerShown(entry: string): string {
  const trimmed = entry.trim();
  const first = /^[^\s:=]*/.exec(trimmed)?.[0] ?? '';
  return JSON.stringify(first.length < trimmed.length ? `${first}…` : first);
}

/**
 * Parses `--header "Name: value"` entries (a `=` separator is accepted too).
 * @throws UsageError for an entry without a name, a name that is not an HTTP token, or a value
 *   with NUL, CR, LF or a character beyond U+00FF. The error shows no more of the entry than its
 *   first word: the value may be a secret.
 */
export function parseHeaders(entries: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.search(/[:=]/);
    const name = at < 0 ? '' : entry.slice(0, at).trim();
    if (name === '')
      throw new UsageError(`--header expects "Name: value", got ${headerShown(entry)} (the rest not shown)`);
    if (!HEADER_NAME.test(name)) {
      throw new UsageError(
        `--header: ${headerShown(name)} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`,
      );
    }
    const value = entry.slice(at + 1).trim();
    if (BAD_HEADER_VALUE.test(value)) {
      throw new UsageError(`--header ${name}: the value may not contain NUL, CR, LF or characters beyond U+00FF`);
    }
    setOwn(headers, name, value);
  }
  return headers;
}

/**
 * Splits a command line into words as a POSIX shell would for simple cases: whitespace separates,
 * single quotes are literal, double quotes group (with `\` escaping `"`, `\` and `$`), and `\`
 * escapes the next character outside quotes. No expansion of variables or globs.
 * @throws UsageError for an empty command or an unterminated quote.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$'.includes(line[i + 1] as string)) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new UsageError(`--stdio: unterminated ${quote} quote in "${line}"`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new UsageError('--stdio expects a command line');
  return words;
}

/** The 2026 tasks extension's wire name. */
export const EXT_WIRE = 'io.modelcontextprotocol/tasks';

/** What `--wire` asks for: automatic, or one task wire. */
export type WireChoice = 'auto' | '2025-11-25' | typeof EXT_WIRE;

const WIRES: Readonly<Record<string, WireChoice>> = {
  auto: 'auto',
  '2025-11-25': '2025-11-25',
  '2025': '2025-11-25',
  [EXT_WIRE]: EXT_WIRE,
  ext: EXT_WIRE,
};

/**
 * Parses `--wire`: `auto` (the default), `2025-11-25` (alias `2025`) or
 * `io.modelcontextprotocol/tasks` (alias `ext`), case-insensitive.
 * @throws UsageError for anything else.
 */
export function parseWire(text: string | undefined): WireChoice {
  if (text === undefined) return 'auto';
  const wire = WIRES[text.trim().toLowerCase()];
  if (wire !== undefined) return wire;
  const hint = /2026/.test(text) ? ` (the 2026-07-28 task wire is ${EXT_WIRE}, or ext)` : '';
  throw new UsageError(`--wire expects auto, 2025-11-25 (or 2025) or ${EXT_WIRE} (or ext), got "${text}"${hint}`);
}

/** `text` with what may be a user name and password (between `//` and `@`) left out. */
const withoutUserinfo = (text: string): string => text.replace(/\/\/[^/?#]*@/, '//…@');

/**
 * The `--url` option as a URL (`undefined` when not given); a value that is not an `http:` or
 * `https:` URL, or one with a user name or password (which fetch refuses to send), is a
 * {@link UsageError} that does not show them.
 */
export function urlOption(value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url: not a URL: ${withoutUserinfo(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `--url: a Streamable HTTP server's URL starts with http:// or https://, got ${withoutUserinfo(value)}`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(
      `--url: the URL carries a user name or password (not shown here), which is not sent that way: give the URL without them and the credentials as a header, e.g. --header "Authorization: Basic <base64 of user:password>"`,
    );
  }
  return url;
}
