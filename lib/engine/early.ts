/**
 * Notifications that arrive before their task's `CreateTaskResult` (seen with server-everything
 * over stdio) are kept here until the task is tracked. Only while a creation is under way, and
 * only a bounded number: mcp-go broadcasts every task to every session, so unknown ids are normal.
 */
import type { WireSnapshot } from '../wire/wire.js';

/** What `take` returns for a task with nothing kept (shared: no array per tracked task). */
const NONE: readonly WireSnapshot[] = Object.freeze([]);

/** A bounded buffer of early snapshots, by task id. */
export class EarlyBuffer {
  private readonly byTask = new Map<string, WireSnapshot[]>();
  private count = 0;
  private creating = 0;

  constructor(
    private readonly limit: number,
    /** Called when the last creation under way settled. */
    private readonly onIdle: () => void = () => {},
  ) {}

  /** True while a creation is under way. */
  get busy(): boolean {
    return this.creating > 0;
  }

  /** Marks a creation as under way; each is ended by exactly one {@link EarlyBuffer.end}. */
  begin(): void {
    this.creating += 1;
  }

  /** A creation settled; when none is under way any more the buffer empties. */
  end(): void {
    if (this.creating === 0) return;
    this.creating -= 1;
    if (this.creating === 0) {
      this.clear();
      this.onIdle();
    }
  }

  /** Keeps `task` if a creation is under way (dropping the oldest task's snapshots when full). */
  offer(snapshot: WireSnapshot): void {
    const task = snapshot.task;
    if (this.creating === 0) return;
    if (this.count >= this.limit) {
      const oldest = this.byTask.keys().next().value;
      if (oldest !== undefined) {
        this.count -= this.byTask.get(oldest)?.length ?? 0;
        this.byTask.delete(oldest);
      }
    }
    const list = this.byTask.get(task.taskId);
    if (list === undefined) this.byTask.set(task.taskId, [snapshot]);
    else list.push(snapshot);
    this.count += 1;
  }

  /** Removes and returns the snapshots kept for `taskId`, oldest first. */
  take(taskId: string): readonly WireSnapshot[] {
    const list = this.byTask.get(taskId);
    if (list === undefined) return NONE;
    this.byTask.delete(taskId);
    this.count -= list.length;
    return list;
  }

  /** Drops everything. */
  clear(): void {
    this.byTask.clear();
    this.count = 0;
  }
}
