/**
 * A set of objects that each keep their own index in it, for the client-wide sets every call
 * joins and leaves (the calls waiting for their reply, the calls in flight, the task creations
 * under way). A `Set` rebuilds its hash table as it fills and again as it empties: with a
 * thousand calls started together, that is a table per doubling and per halving, on every
 * call's path. Here a member is an array slot: joining appends (the array grows by a factor, and
 * is trimmed in place as it empties), leaving moves the last member into the hole. Order is not
 * kept. A member is in one set per key field at a time (the library's members never change sets).
 */

/** A set of members whose field `key` holds their index in it (-1 while in none). */
export class SlotSet<K extends string, T extends Record<K, number>> {
  private readonly members: T[] = [];

  /** @param key The field of each member that holds its index here (start it at -1). */
  constructor(private readonly key: K) {}

  /** Number of members. */
  get size(): number {
    return this.members.length;
  }

  /** Adds `member` (nothing when it is in already). */
  add(member: T): void {
    const key = this.key;
    const at = member[key];
    if (at !== -1 && this.members[at] === member) return;
    (member as Record<K, number>)[key] = this.members.length;
    this.members.push(member);
  }

  /** Removes `member`; false when it was not in. */
  delete(member: T): boolean {
    const key = this.key;
    const at = member[key];
    const members = this.members;
    if (at === -1 || members[at] !== member) return false;
    const last = members.pop()!;
    if (last !== member) {
      members[at] = last;
      (last as Record<K, number>)[key] = at;
    }
    (member as Record<K, number>)[key] = -1;
    return true;
  }

  /** The member at `index` (0 ≤ index < size): for a walk in which no member joins or leaves. */
  at(index: number): T {
    return this.members[index]!;
  }

  /** The members now, as an array of their own: for a walk in which members may leave. */
  snapshot(): T[] {
    return this.members.slice();
  }
}
