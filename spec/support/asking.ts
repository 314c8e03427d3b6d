/**
 * A 2025-11-25 question for the scripted server to ask: an elicitation tagged with the task it
 * belongs to ([V7]), and tools whose tasks ask it as soon as they exist.
 */
import type { Json, ScriptedServer } from './scripted-server.js';

/** The `_meta` key that names the task a request belongs to ([V7]). */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** The question the scripted tasks ask. */
export const QUESTION: Json = {
  message: 'Delete /data/a?',
  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
};

/** {@link QUESTION}, tagged with `taskId`. */
export function questionFor(taskId: string): Json {
  return { ...QUESTION, _meta: { [RELATED_TASK]: { taskId } } };
}

/**
 * Every `tools/call` creates a task in `input_required` that asks {@link QUESTION} once it exists
 * (after its `CreateTaskResult`); each reply the server gets is pushed onto `replies`. Whatever the
 * reply, the task goes on waiting.
 */
export function askingTasks(server: ScriptedServer, pollInterval: number, replies: Json[]): void {
  server.on('tools/call', () => {
    const created = server.tasks.createResult({ status: 'input_required', pollInterval });
    const taskId = (created.task as { taskId: string }).taskId;
    setTimeout(() => {
      void server.request('elicitation/create', questionFor(taskId)).then((reply) => replies.push(reply));
    }, 0);
    return created;
  });
}
