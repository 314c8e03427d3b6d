/**
 * `tasks/list` cursors: opaque to the requestor ([R23]) and unforgeable. A cursor names the
 * position after the last task of its page, `<position>.<token>`, where the token is 128 random
 * bits drawn for that position on this connection and kept here: a cursor that was never issued
 * here (a guessed or altered one, or one issued on another connection) is rejected with -32602
 * ([V26]). Tokens are compared in constant time, and nothing but `getRandomValues` is needed, so
 * this works in every runtime (WebCrypto's HMAC is asynchronous, and absent from pages that are
 * not a secure context).
 *
 * Memory: a position keeps one token however often it is listed, and only the
 * {@link MAX_CURSORS} positions issued last (a position issued again counts from then) are kept;
 * a cursor older than that is refused like a foreign one (the requestor lists again from the start).
 */
import { randomToken } from '../util/random.js';

/** How many positions keep their cursor valid: the most recently issued ones. */
export const MAX_CURSORS = 1024;

/** True when `a` and `b` are the same text; the time taken depends on their lengths only. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** Issues and opens the cursors of one connection. */
export class Cursors {
  /** The token of each issued position, in the order last issued. */
  private readonly tokens = new Map<number, string>();

  /**
   * A cursor for "after the task with sequence number `seq`". A position issued again keeps its
   * token and counts as the last one issued: a requestor listing from the start again keeps the
   * cursor of its first page, the one it uses most, among those kept.
   */
  issue(seq: number): string {
    let token = this.tokens.get(seq);
    if (token === undefined) token = randomToken(16);
    else this.tokens.delete(seq);
    this.tokens.set(seq, token);
    if (this.tokens.size > MAX_CURSORS) this.tokens.delete(this.tokens.keys().next().value!);
    return `${seq.toString(36)}.${token}`;
  }

  /** The sequence number a cursor names; `undefined` when this connection never issued it (or no longer keeps it). */
  open(cursor: string): number | undefined {
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 64) return undefined;
    const body = cursor.slice(0, dot);
    if (!/^[0-9a-z]+$/.test(body)) return undefined;
    const seq = Number.parseInt(body, 36);
    if (!Number.isSafeInteger(seq) || seq.toString(36) !== body) return undefined;
    const token = this.tokens.get(seq);
    return token !== undefined && sameText(cursor.slice(dot + 1), token) ? seq : undefined;
  }
}
