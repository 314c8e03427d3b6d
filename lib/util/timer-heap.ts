/**
 * The scheduler's jobs and the binary min-heap that orders them (`scheduler.ts` keeps the one
 * clock timer armed for the earliest). A job is an {@link Entry}: its due time as a compact offset
 * (`util/epoch.ts`) and its yes/no state as bits of one small integer.
 */
import { EPOCH, offsetOf } from './epoch.js';
import { keepShape } from './shapes.js';
import { noop } from './noop.js';

/** A scheduled job. Keep it to cancel it. */
export interface Timer {
  /** When the job runs, in clock milliseconds. */
  readonly at: number;
  /** False once the job ran or was cancelled. */
  readonly live: boolean;
}

// The bits of an Entry's state: plain constants rather than a const enum, which tsc under
// isolatedModules compiles to an object looked up by name (as engine/record-flags.ts does).
/** The job is live: neither ran nor was cancelled. */
export const LIVE = 1;
/** The job is weak: it does not keep the process alive. */
export const WEAK = 2;
/** The due time is kept as given, not as an offset (`util/epoch.ts`). */
export const RAW_DUE = 4;
/** The job rests (`Scheduler.rest`, scheduler.ts): in the heap, live, but not counted, and not run when due. */
export const RESTING = 8;

/**
 * A timer as the scheduler keeps it. Every in-flight task holds one or two, so it is kept small:
 * the due time as a compact offset (`util/epoch.ts`) and the yes/no state in one integer.
 */
export class Entry implements Timer {
  /** The due time: an offset from {@link EPOCH}, or as given ({@link RAW_DUE}). */
  readonly due: number;
  state: number;
  /** The job and its argument; dropped when the entry is cancelled, so a dead entry waiting in the heap holds nothing. */
  run: (arg: unknown) => void;
  arg: unknown;

  constructor(
    at: number,
    readonly seq: number,
    run: (arg: unknown) => void,
    arg: unknown,
    weak: boolean,
  ) {
    const offset = offsetOf(at);
    const exact = offset === offset;
    this.due = exact ? offset : at;
    this.state = LIVE | (weak ? WEAK : 0) | (exact ? 0 : RAW_DUE);
    this.run = run;
    this.arg = arg;
  }

  get at(): number {
    return (this.state & RAW_DUE) !== 0 ? this.due : this.due + EPOCH;
  }

  get live(): boolean {
    return (this.state & LIVE) !== 0;
  }

  get weak(): boolean {
    return (this.state & WEAK) !== 0;
  }

  get resting(): boolean {
    return (this.state & RESTING) !== 0;
  }

  /** Marks the entry done (ran or cancelled) and lets go of its job. */
  end(): void {
    this.state &= ~(LIVE | RESTING);
    this.run = noop;
    this.arg = undefined;
  }
}

// Its hidden class outlives an idle spell (util/shapes.ts): an ended entry holds nothing.
keepShape(new Entry(EPOCH, 0, noop, undefined, false));

/**
 * Whether `a` runs before `b`: by due time, then by scheduling order. Two offsets compare as
 * they are (small integers: no due time is built, and no heap number allocated, per comparison).
 */
function before(a: Entry, b: Entry): boolean {
  let aAt = a.due;
  let bAt = b.due;
  if (((a.state | b.state) & RAW_DUE) !== 0) {
    aAt = a.at;
    bAt = b.at;
  }
  return aAt < bAt || (aAt === bAt && a.seq < b.seq);
}

/** Adds `entry` to `heap`, sifted up to its place. */
export function pushEntry(heap: Entry[], entry: Entry): void {
  heap.push(entry);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const child = heap[i]!;
    const up = heap[parent]!;
    if (!before(child, up)) break;
    heap[i] = up;
    heap[parent] = child;
    i = parent;
  }
}

/** Removes the top of `heap` (its earliest entry), the last entry sifted down into its place. */
export function popEntry(heap: Entry[]): void {
  const last = heap.pop();
  if (heap.length > 0 && last !== undefined) {
    heap[0] = last;
    siftDown(heap, 0);
  }
}

/** Sifts the entry at `start` down `heap` to its place. */
export function siftDown(heap: Entry[], start: number): void {
  let i = start;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
    if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
    if (m === i) return;
    const top = heap[i]!;
    heap[i] = heap[m]!;
    heap[m] = top;
    i = m;
  }
}
