/**
 * A task's record, its input listing: the input requests that rode on the task's snapshots
 * ([E3]), which keys were handed out and with what request ([E4]), which the task still lists
 * ([E5]), and the answers a `tasks/update` failed to deliver, kept to be sent again ([E23]).
 * input-delivery.ts hands the requests out and sends the answers; these methods keep its state.
 *
 * A floor of the record between its schedule (record-schedule.ts) and the rest of the methods that
 * change it (record.ts); the ownership map heading record.ts names these methods' callers too.
 */
import { canonicalJson } from '../util/json.js';
import { sha256Hex } from '../util/sha256.js';
import type { InlineInput } from '../wire/wire.js';
import type { KeptAnswer } from './record-extras.js';
import { RecordSchedule } from './record-schedule.js';

/** The methods of a task's record that change its input listing (see the module comment). */
export abstract class RecordInput extends RecordSchedule {
  // ---- input-delivery.ts: inline input ----

  /**
   * Input requests rode on a snapshot ([E3]). Their keys are remembered, each with a fingerprint
   * of its request: each key is handed out once over the task's life ([E4]).
   * A reused key takes no answer from then on: one given (or kept to be sent again) was to the
   * request it named before, which the server would read as the answer to the new one.
   * @returns `fresh`: those not seen before; `reused`: those whose key came before with another
   *   request (the server broke [E4]; each such change is returned once).
   */
  inputArrived(input: readonly InlineInput[]): { fresh: InlineInput[]; reused: InlineInput[] } {
    const extras = this.more();
    const seen = (extras.inputKeys ??= new Map<string, string>());
    const fresh: InlineInput[] = [];
    const reused: InlineInput[] = [];
    for (const item of input) {
      const print = requestPrint(item);
      const before = seen.get(item.key);
      if (before === print) continue;
      seen.set(item.key, print);
      if (before === undefined) {
        fresh.push(item);
        continue;
      }
      reused.push(item);
      (extras.changedKeys ??= new Set()).add(item.key);
      this.answerUnlisted(item.key);
    }
    return { fresh, reused };
  }

  /** A current snapshot said which input request keys the task has outstanding (`keys`; none: empty). */
  inputListed(keys: ReadonlySet<string>): void {
    if (keys.size === 0 && this.extras?.outstanding === undefined) return;
    this.more().outstanding = keys;
  }

  /**
   * The prompt of the request `key` was dismissed unanswered, the task having stopped listing it:
   * the key is forgotten, and a listing that names it again hands it out again ([E4] spares the
   * user only answered keys). No answer went under it, so a different request there is no reuse.
   */
  inputDismissed(key: string): void {
    const extras = this.extras;
    extras?.inputKeys?.delete(key);
    extras?.changedKeys?.delete(key);
  }

  /** A `tasks/update` failed to deliver `answer` to the request `key`: it is kept to be sent again ([E23]). */
  answerKept(key: string, answer: KeptAnswer): void {
    (this.more().undelivered ??= new Map()).set(key, answer);
  }

  /** A `tasks/update` delivered `answer` to the request `key`: it is no longer kept (unless replaced meanwhile). */
  answerDelivered(key: string, answer: KeptAnswer): void {
    const kept = this.extras?.undelivered;
    if (kept?.get(key) !== answer) return;
    kept.delete(key);
    if (kept.size === 0) this.extras!.undelivered = undefined;
  }

  /** A poll no longer lists the request `key`: its kept answer is dropped. */
  answerUnlisted(key: string): void {
    const kept = this.extras?.undelivered;
    if (kept === undefined) return;
    kept.delete(key);
    if (kept.size === 0) this.extras!.undelivered = undefined;
  }
}

/**
 * A short fingerprint of an input request: its method and params, whatever their key order, and
 * without the params' `_meta` (a server may stamp each listing with its own: a trace context, a
 * time), which says nothing about what is asked.
 */
function requestPrint(item: InlineInput): string {
  const { _meta: _ignored, ...asked } = item.params;
  return sha256Hex(canonicalJson([item.method, asked]));
}
