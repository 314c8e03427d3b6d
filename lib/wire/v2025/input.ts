/**
 * Side-channel input on the 2025-11-25 wire: the server's `elicitation/create` and
 * `sampling/createMessage` requests, tagged with the task they belong to ([V7]), answered through
 * the library's input handler and tagged back ([R31]). Untagged requests (mcp-go, D14) go to the
 * handler too, which may tie them to a call; their answers stay untagged (the server named no
 * task). A request nobody answers is left to the SDK client's own handler, or refused with a plain
 * -32601 that says nobody here can answer it (never declined on the user's behalf), and for an
 * untagged one why no call's callback was chosen. The text is for whoever reads the server's
 * result (a server often puts it in the tool's `isError` result, which an agent's model reads): it
 * says what happened, not which option the client's developer should set (docs/input.md does).
 */
import type { InboundRequest, JsonObject, SessionPort } from '../../port/port.js';
import { fingerprint } from '../../util/fingerprint.js';
import { rpcFieldsOf, rpcThrowable } from '../../util/rpc-error.js';
import { isObject } from '../decode.js';
import type { InputHandler, InputKind, InputRefusal, UnattributedNote } from '../wire.js';
import { RELATED_TASK_KEY, relatedTaskId } from './decode.js';

const INPUT_METHODS: ReadonlyArray<readonly [string, InputKind]> = [
  ['elicitation/create', 'elicitation'],
  ['sampling/createMessage', 'sampling'],
];

/** Who owns which tasks, and who hears of their refused requests (one per TaskClient serving input on a port). */
type Owns = (taskId: string) => boolean;
type Refused = ((refusal: InputRefusal) => void) | undefined;

/** Per port, the TaskClients serving input on it. */
const OWNERS = new WeakMap<SessionPort, Map<Owns, Refused>>();

/**
 * The cause of the error for an untagged request nobody answered: it named no task, and the calls
 * in flight did not tell which one asked (or there was none).
 */
function unattributedCause(note: UnattributedNote): string {
  const host = note.hostRequests;
  if (note.reason === 'no-task') {
    const only =
      host === 0 ? '' : ` (only ${host} request${host === 1 ? '' : 's'} sent through the SDK client directly)`;
    return `the request named no task (no related-task _meta) and no call of the TaskClient was in flight${only}, and the client has no handler of its own to answer it`;
  }
  const total = note.inFlight + host;
  const waiting =
    note.waitingForInput === 0 ? 'none of them waiting for input' : `${note.waitingForInput} of them waiting for input`;
  const direct = host === 0 ? '' : `, ${host} sent through the SDK client directly`;
  return `the request named no task (no related-task _meta) while ${total} calls were in flight (${waiting}${direct}), so no call's own handler could be chosen, and the client has no handler of its own to answer it`;
}

/** Tells the TaskClient that owns the task of `refusal` (if one does) that nobody answered it. */
function tellOwner(registry: Map<Owns, Refused>, refusal: InputRefusal): void {
  for (const [owns, refused] of registry) {
    if (!owns(refusal.taskId)) continue;
    refused?.(refusal);
    return;
  }
}

/**
 * Serves side-channel input on `port` through `handler`; returns a function that stops serving.
 * `refused` hears of a request for one of `owns`' tasks that nobody answered.
 */
export function serveSideChannelInput(
  port: SessionPort,
  handler: InputHandler,
  owns: Owns,
  refused?: (refusal: InputRefusal) => void,
): () => void {
  let owners = OWNERS.get(port);
  if (owners === undefined) OWNERS.set(port, (owners = new Map<Owns, Refused>()));
  owners.set(owns, refused);
  const registry = owners;
  const offs = INPUT_METHODS.map(([method, kind]) => {
    // Why an untagged request reached no call's callback, when the library could not tell (D14).
    const notes = new WeakMap<JsonObject, UnattributedNote>();
    // Nobody answers (no callback here, no SDK handler): say so plainly rather than decline on the
    // user's behalf. The client that owns the task hears of it too, as it would on the tasks
    // extension (an untagged request fired inputUnattributed already).
    const missing = (params: JsonObject): Error => {
      const note = notes.get(params);
      if (note !== undefined) return rpcThrowable(-32601, `No ${kind} handler: ${unattributedCause(note)}`);
      const taskId = relatedTaskId(params);
      if (taskId !== undefined) tellOwner(registry, { kind, method, taskId });
      const about = taskId === undefined ? '' : ` for task ${fingerprint(taskId)}`;
      return rpcThrowable(
        -32601,
        `No ${kind} handler${about}: this client cannot answer ${kind} requests, so nobody was asked`,
      );
    };
    const tap = (request: InboundRequest): Promise<JsonObject | undefined> | undefined => {
      const params = request.params;
      const taskId = relatedTaskId(params);
      // A request for a task another TaskClient on this SDK client owns is that one's to answer:
      // now, or once its CreateTaskResult arrived (the handler asks again after waiting for it).
      const ownedElsewhere = (): boolean =>
        taskId !== undefined && !owns(taskId) && [...registry.keys()].some((other) => other !== owns && other(taskId));
      if (ownedElsewhere()) return undefined;
      const unattributed = (note: UnattributedNote): void => {
        notes.set(params, note);
      };
      const answer = handler({
        id: request.id,
        port,
        kind,
        params,
        taskId,
        signal: request.signal,
        ownedElsewhere,
        unattributed,
      });
      return answer?.then(
        (result) => {
          if (result === undefined) return undefined;
          if (taskId === undefined) return result;
          const meta = isObject(result._meta) ? result._meta : {};
          return { ...result, _meta: { ...meta, [RELATED_TASK_KEY]: { taskId } } };
        },
        (error: unknown) => {
          // An error that carries a JSON-RPC code goes as it is; any other (a DOMException's legacy
          // code, a code that is no integer) is wrapped, its message kept, the same test as the reply's.
          if (rpcFieldsOf(error).code !== undefined) throw error;
          const message = error instanceof Error ? error.message : String(error);
          throw rpcThrowable(-32603, `The ${kind} callback failed: ${message}`);
        },
      );
    };
    return port.onRequest(method, tap, missing);
  });
  return () => {
    registry.delete(owns);
    for (const off of offs) off();
  };
}
