/**
 * `tasks/list` cursors: opaque to the requestor ([R23]) and unforgeable. A cursor names the
 * position after the last task of its page, sealed with an HMAC under a key that lives and dies
 * with one connection's receiver, so a cursor that was never issued here (or was issued on
 * another connection) is rejected with -32602 ([V26]) and no cursor needs to be remembered.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Issues and opens the cursors of one connection. */
export class Cursors {
  private readonly key = randomBytes(32);

  /** A cursor for "after the task with sequence number `seq`". */
  issue(seq: number): string {
    const body = seq.toString(36);
    return `${body}.${this.seal(body)}`;
  }

  /** The sequence number a cursor names; `undefined` when this connection never issued it. */
  open(cursor: string): number | undefined {
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 64) return undefined;
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.seal(body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const seq = Number.parseInt(body, 36);
    return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
  }

  private seal(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url').slice(0, 22);
  }
}
