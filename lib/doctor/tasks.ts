/**
 * The tasks the doctor started, across every session: their last known status, and in the end
 * what became of them (the report's task account).
 */
import type { TaskAccount } from './types.js';
import { isTerminal, nameText } from './shape.js';

interface Tracked {
  /** The tool's name, as the notes quote it (one line, cut). */
  readonly tool: string;
  readonly owner: object;
  status: string | undefined;
  /** It came in the reply to a call the doctor had given up on. */
  late: boolean;
  /** A note says why it is left running. */
  explained: boolean;
}

/** Every task the doctor started. */
export class TaskLedger {
  private readonly tasks = new Map<string, Tracked>();
  private readonly notes: string[] = [];
  /** What each owner (a session) is told of a task it starts tracking. */
  private readonly watchers = new Map<object, (taskId: string) => void>();

  /**
   * Records a task `owner` (a session) started with `tool` (its name kept as the notes quote it);
   * the owner's watcher is told of it once it is recorded.
   */
  track(taskId: string, tool: string, owner: object, status: string | undefined): void {
    if (this.tasks.has(taskId)) return;
    this.tasks.set(taskId, { tool: nameText(tool), owner, status, late: false, explained: false });
    this.watchers.get(owner)?.(taskId);
  }

  /** Tells `onTrack` of every task `owner` starts tracking from now on. */
  watch(owner: object, onTrack: (taskId: string) => void): void {
    this.watchers.set(owner, onTrack);
  }

  /** Notes the latest status seen of a task (a terminal one is kept). */
  seen(taskId: string, status: string | undefined): void {
    const task = this.tasks.get(taskId);
    if (task === undefined || status === undefined || isTerminal(task.status)) return;
    task.status = status;
  }

  /** The server forgot the task: it runs no more. */
  gone(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (task !== undefined && !isTerminal(task.status)) task.status = 'gone';
  }

  has(taskId: string): boolean {
    return this.tasks.has(taskId);
  }

  /** Every task id (for scrubbing messages). */
  ids(): IterableIterator<string> {
    return this.tasks.keys();
  }

  /** Tasks of `owner` not known to have ended, with their tool (its name as the notes quote it). */
  running(owner: object): Array<{ taskId: string; tool: string }> {
    const out: Array<{ taskId: string; tool: string }> = [];
    for (const [taskId, task] of this.tasks)
      if (task.owner === owner && !isTerminal(task.status) && task.status !== 'gone')
        out.push({ taskId, tool: task.tool });
    return out;
  }

  /** True while any task of `owner` may be running (an untagged question may be one of theirs). */
  anyRunning(owner: object): boolean {
    return this.running(owner).length > 0;
  }

  /** Says why a task (`taskId`, when one in particular) is left running. */
  leftRunning(note: string, taskId?: string): void {
    const task = taskId === undefined ? undefined : this.tasks.get(taskId);
    if (task !== undefined) task.explained = true;
    this.notes.push(note);
  }

  /** A tracked task came in the reply to a call the doctor had given up on (`note` says so). */
  cameLate(taskId: string, note: string): void {
    const task = this.tasks.get(taskId);
    if (task === undefined) return;
    task.late = true;
    this.notes.push(note);
  }

  /** The report's account. */
  account(): TaskAccount {
    let finished = 0;
    let cancelled = 0;
    let running = 0;
    const notes = [...this.notes];
    for (const task of this.tasks.values()) {
      if (task.status === 'cancelled') cancelled += 1;
      else if (task.status === 'completed' || task.status === 'failed' || task.status === 'gone') finished += 1;
      else {
        running += 1;
        // A task that came late while the run was ending: its clean-up did not get to stop it.
        if (task.late && !task.explained)
          notes.push(`a task of ${task.tool}: it came late, and the run ended before its clean-up could stop it`);
      }
    }
    return { started: this.tasks.size, finished, cancelled, leftRunning: running, notes };
  }
}
