/**
 * Status notifications of tasks the doctor does not know yet (2025-11-25), held while a call that
 * may create a task is open: a server may send one before its `CreateTaskResult` ([V21]: a status
 * change may be notified as it happens, and no rule orders it against the reply). The library
 * holds such notifications too (engine/early.ts).
 */
import type { Note } from './inbound.js';

/**
 * Most notifications held: mcp-go sends every task's notifications to every session, so unknown
 * ids are normal, and only the latest are kept.
 */
const EARLY_NOTES = 64;

/** The notifications held, oldest first. */
export class EarlyNotes {
  private readonly held: Note[] = [];

  /** Holds `note`, marked early; the oldest goes when the hold is full. */
  hold(note: Note): void {
    if (this.held.length >= EARLY_NOTES) this.held.shift();
    this.held.push({ ...note, early: true });
  }

  /** Takes out the notifications held for `taskId`, oldest first. */
  take(taskId: string): Note[] {
    if (!this.held.some((note) => note.taskId === taskId)) return [];
    const taken = this.held.filter((note) => note.taskId === taskId);
    const rest = this.held.filter((note) => note.taskId !== taskId);
    this.held.splice(0, this.held.length, ...rest);
    return taken;
  }

  /** Drops every notification held. */
  clear(): void {
    this.held.length = 0;
  }
}
