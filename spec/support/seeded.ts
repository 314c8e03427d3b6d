/**
 * The fuzz specs' dice: draws from a seeded PRNG (the benchmark's mulberry32, bench/stats.ts), so a
 * seed replays the same case.
 */
import { prng } from '../../bench/stats.js';

/** Seeded draws. */
export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  /** A value in [0, 1). */
  float(): number {
    return this.next();
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** One of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}
