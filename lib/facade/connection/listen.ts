/**
 * What a TaskClient listens to on each wire it uses: task status, malformed messages, tool-list
 * changes, the transport closing, progress, and the input requests it serves.
 */
import type { Connection } from './connection.js';
import type { TaskEngine } from '../../engine/engine.js';
import type { InputRouter } from '../input/router.js';
import type { LiveTasks } from '../handle/registry.js';
import type { ToolCatalog } from '../call/tool-catalog.js';
import type { TaskWire } from '../../wire/wire.js';

/** Subscribes to `wire`'s events and serves its input requests; returns the undo. */
export function listenOn(
  wire: TaskWire,
  engine: TaskEngine,
  catalog: ToolCatalog,
  connection: Connection,
  live: LiveTasks,
  router: InputRouter,
): () => void {
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
    ),
  ];
  return () => {
    for (const off of offs) off();
  };
}
