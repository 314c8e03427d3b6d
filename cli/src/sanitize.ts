/**
 * Terminal hygiene: text that comes from a server (status messages, results, questions, tool
 * descriptions, error messages, a stdio server's stderr) is written to a terminal only through
 * {@link terminalSafe}, so that it cannot drive the terminal: no escape sequences (window title,
 * screen clearing, cursor moves, OSC 52 clipboard writes, hyperlinks), no carriage returns that
 * overwrite a line, no bells. JSON lines need none of this: JSON escapes every C0 control, and
 * {@link JsonReporter} escapes C1 and DEL as well.
 */

/** C0 controls, DEL and C1 controls (U+0080-U+009F, where U+009B is an 8-bit CSI). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` with every control character replaced by a visible stand-in: a C0 control or DEL by its
 * Unicode control picture (ESC shows as `␛`, BEL as `␇`, CR as `␍`), a C1 control by `�`. The
 * characters of an escape sequence that follow its ESC are left as they are: they are plain text
 * once the ESC is gone, and show what the server sent. With `multiline`, `\n` and `\t` are kept;
 * without it (a text shown on one line), they become a space.
 */
export function terminalSafe(text: string, options: { readonly multiline?: boolean } = {}): string {
  return text.replace(CONTROL, (ch) => {
    if (ch === '\n' || ch === '\t') return options.multiline === true ? ch : ' ';
    const code = ch.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return '\ufffd';
  });
}

/** `JSON.stringify` of `value` that also escapes DEL and the C1 controls (which JSON leaves raw). */
export function jsonSafe(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(
    /[\u007f-\u009f]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
