/**
 * The end's status notification ([V21] on 2025-11-25, [E18] on the extension) may leave the server
 * after its answer to the read that showed the end: no rule orders a notification against a
 * reply. The doctor waits a little for it before it judges the task's notifications, so that a
 * verdict never depends on which of the two the transport delivered first.
 */
import type { Session } from './session.js';
import { isTerminal } from './shape.js';

/** How long the doctor waits for the end's notification once a read showed the end. */
export const LATE_NOTE_MS = 500;

/** How often it looks meanwhile. */
const LOOK_EVERY_MS = 10;

/**
 * Waits, at most {@link LATE_NOTE_MS}, until a terminal status notification of `taskId` came.
 * Returns at once when one came already, or when the task was not seen to end (`ended` false).
 * Throws `ProbeStopped` when the probe stops meanwhile, as every wait of the doctor does.
 */
export async function awaitEndNote(s: Session, taskId: string, ended: boolean): Promise<void> {
  if (!ended) return;
  const until = s.now() + LATE_NOTE_MS;
  while (!s.notesOf(taskId).some((note) => isTerminal(note.status)) && s.now() < until)
    await s.sleep(Math.min(LOOK_EVERY_MS, until - s.now()));
}
