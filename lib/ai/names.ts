/**
 * The names the model calls the tools by. Model providers accept tool names of 1 to 64 letters,
 * digits, `_` and `-` (OpenAI and Anthropic check `^[a-zA-Z0-9_-]{1,64}$`), and Gemini also wants
 * a letter or `_` first. An MCP tool name may hold other characters (`files.read`,
 * `github/search`), a prefix makes it longer, and a server may even list an empty one: such a name
 * is made safe here. The server's own name is what each call sends (the plan's `serverName`, and
 * the tool's metadata `toolName`).
 */

/** The longest tool name providers accept. */
const MAX_LENGTH = 64;
/** A name every provider accepts. */
const SAFE = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
/** What providers do not accept in a name, one code point at a time. */
const UNSAFE = /[^a-zA-Z0-9_-]/gu;
/** Hex digits of the hash a shortened or clashing name ends with. */
const HASH_DIGITS = 8;

/** True when every model provider accepts `name` as a tool name. */
export function isSafeName(name: string): boolean {
  return SAFE.test(name);
}

/** A short stable hash of `text` (32-bit FNV-1a of its UTF-16 code units), as hex digits. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(HASH_DIGITS, '0');
}

/** `base` cut to fit, ending with `_` and the hash of `name` (the name it was made from). */
function hashed(base: string, name: string): string {
  return `${base.slice(0, MAX_LENGTH - HASH_DIGITS - 1)}_${shortHash(name)}`;
}

/**
 * `name` made safe: every other character becomes `_`, a name that starts with neither a letter nor
 * `_` gets a `_` in front (an empty one becomes `tool`), and one longer than 64 is cut and ends
 * with a hash of `name`, so that two long names that start alike stay apart.
 */
function cleaned(name: string): string {
  let safe = name.replace(UNSAFE, '_');
  if (safe === '') safe = 'tool';
  else if (!/^[a-zA-Z_]/.test(safe)) safe = `_${safe}`;
  return safe.length > MAX_LENGTH ? hashed(safe, name) : safe;
}

/**
 * The safe names of `names` (the prefixed server names), in order. A name already safe is kept;
 * another one is {@link cleaned}. When cleaning makes names meet (`files.read` and `files_read`),
 * each one that was changed ends with a hash of its own name (`files_read_1a2b3c4d`), and the one
 * that was already safe keeps its name. The same names always give the same result.
 */
export function safeNames(names: readonly string[]): string[] {
  const candidates = names.map(cleaned);
  const count = new Map<string, number>();
  for (const candidate of candidates) count.set(candidate, (count.get(candidate) ?? 0) + 1);
  return candidates.map((candidate, index) => {
    const name = names[index]!;
    if (candidate === name || (count.get(candidate) ?? 0) < 2) return candidate;
    return hashed(candidate, name);
  });
}
