/**
 * What a TaskClient listens to on each wire it uses: task status, malformed messages, tool-list
 * changes, the transport closing, progress, and the input requests it serves; and what follows
 * the connection to a new session port (the receiver, the attribution of untagged input).
 */
import type { TaskEngine } from '../../engine/engine.js';
import type { ToolCatalog } from '../call/tool-catalog.js';
import type { LiveTasks } from '../handle/registry.js';
import type { InputRouter } from '../input/router.js';
import type { Serving } from '../input/serving.js';
import type { UntaggedInput } from '../input/untagged.js';
import { unanswered } from '../input/inline.js';
import { openPort } from '../../port/open.js';
import type { SessionPort } from '../../port/port.js';
import type { McpClient } from '../../types.js';
import type { TaskWire } from '../../wire/wire.js';

/** The parts of its TaskClient that listening uses (see facade/parts.ts). */
export interface ListenParts {
  readonly engine: TaskEngine;
  readonly catalog: ToolCatalog;
  /** The SDK client in use, and what happens when a wire's transport closes. */
  readonly connection: { readonly current: McpClient; closed(wire: TaskWire): void };
  readonly live: LiveTasks;
  readonly router: InputRouter;
  readonly serving: Serving;
  readonly untagged: UntaggedInput;
  /** The session port of the current connection: set here, for the connection's current client. */
  port: SessionPort;
}

/**
 * Listens on `wire`, the wire of the connection's current client: its session port becomes the
 * client's, the receiver and the attribution of untagged input follow it there, and the wire's
 * events and input requests are served. Returns the undo.
 */
export function listenOn(parts: ListenParts, wire: TaskWire): () => void {
  const { engine, catalog, connection, live, router } = parts;
  parts.port = openPort(connection.current);
  parts.serving.follow(parts.port);
  const offUntagged = parts.untagged.attach(parts.port);
  // [E35]: what the client answers for any call, which the wire's requests declare unless their
  // call has callbacks of its own.
  wire.answerInput(router);
  const offs = [
    wire.subscribe({
      status: (task) => engine.push(task),
      malformed: (error) => engine.report(error, undefined),
      toolsChanged: () => catalog.invalidate(),
      closed: () => connection.closed(wire),
      progress: (token, progress) => live.deliverProgress(token, progress),
    }),
    wire.serveInput(
      (request) => router.route(request),
      (taskId) => live.handleOf(taskId) !== undefined,
      // A question of one of this client's tasks that nobody answered (the server was told so):
      // reported as on the tasks extension, so that a watcher of `error` (lib/ai) learns of it.
      // Not while closing: the request passed on because the client's callbacks answer no more.
      (refusal) => {
        if (router.closing) return;
        const record = engine.get(refusal.taskId);
        const fix = refusal.kind === 'sampling' ? 'onSampling' : 'onElicitation';
        const why = `pass ${fix} to the call or the TaskClient (the server was told that nobody answers it)`;
        if (record !== undefined) engine.report(unanswered(record, refusal, why), record);
      },
    ),
  ];
  return () => {
    for (const off of offs) off();
    offUntagged();
  };
}
