/**
 * The end a task's payload tells before its status does: a payload that arrived while the task
 * was not seen terminal (the blocking `tasks/result` of the input_required path, payload.ts), or
 * one kept when the server then says it no longer knows the task (`vanished`, payload.ts).
 */
import type { CallToolResult } from '../types.js';
import type { WireSnapshot } from '../wire/wire.js';
import type { EngineCore as TaskEngine } from './types.js';
import type { TaskRecord } from './record.js';

/**
 * A successful payload arrived while the snapshot was not terminal (the input_required path):
 * read the real terminal snapshot once. A payload tagged for this task ([V19]) is the task's even
 * when that read fails or still shows the task running (a server whose status lags, D5), so the
 * terminal status is inferred from it, but only when the payload tells: `isError: true` (failed,
 * [V18]) or some content (completed). A payload that tells nothing (only `_meta`: what the Python
 * SDK answers for a failed or cancelled task, D6, D7) is kept and the task polled on until the
 * server reports its status; repeated failed polls end it as any task ([V17], [V18]). An untagged
 * payload also waits until the server reports the task terminal.
 */
export async function confirmTerminal(engine: TaskEngine, record: TaskRecord): Promise<void> {
  let snapshot: WireSnapshot | undefined;
  try {
    snapshot = await engine.retrying(record, (scope) => engine.readTask(record, scope));
  } catch (error) {
    if (record.settlement === undefined) engine.report(error, record);
  }
  if (record.settlement !== undefined) return;
  if (snapshot !== undefined) engine.observe(record, snapshot, 'result');
  if (record.settlement !== undefined || record.terminal || engine.isStopping(record)) return;
  // A bare `{_meta}` (D6, D7) may stand for a failed or cancelled task: the server's status decides.
  if (!endFromPayload(engine, record)) engine.ensurePoll(record);
}

/**
 * Ends a running task from the payload it holds, when that payload tells how the task ended: a
 * result tagged for this task ([V19]) with `isError: true` (failed, [V18]) or some content
 * (completed). The terminal status is inferred from it and observed, which settles the task. False
 * (nothing done) for no payload, an untagged one, or one that tells nothing (see {@link saysNothing}).
 */
export function endFromPayload(engine: TaskEngine, record: TaskRecord): boolean {
  const payload = record.payload;
  if (payload?.kind !== 'result' || !payload.tagged || saysNothing(payload.result)) return false;
  engine.observe(
    record,
    {
      task: {
        ...record.task,
        status: payload.result.isError === true ? 'failed' : 'completed',
        lastUpdatedAt: new Date(engine.config.clock.now()).toISOString(),
      },
    },
    'result',
  );
  return true;
}

/**
 * True for a tool result that tells nothing about how the task ended: no `isError: true`, no
 * content, no structured content (the bare `{_meta}` of D6, D7).
 */
function saysNothing(result: CallToolResult): boolean {
  return result.isError !== true && result.content.length === 0 && result.structuredContent === undefined;
}
