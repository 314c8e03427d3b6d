/**
 * `tasks/list`: one page, or every page following `nextCursor` (opaque, [R23]). Lenient with the
 * shapes real servers send (D13): one page without a cursor, malformed entries skipped; a cursor
 * that comes back again ends the listing instead of looping.
 */
import type { ClientInstrument } from '../api/index.js';
import type { TaskEngine } from '../engine/engine.js';
import { TaskClosedError, TaskNotSupportedError, type TaskError, type TaskProtocolError } from '../errors.js';
import type { SessionPort } from '../port/port.js';
import type { Task } from '../types.js';
import type { TaskPage } from '../wire/wire.js';
import { instrumentList } from './events/instrumentation.js';

/** The parts of its TaskClient that a listing uses (see facade/parts.ts). */
export interface ListingParts {
  readonly engine: TaskEngine;
  /** `requestTimeoutMs`: the timeout of each `tasks/list` request. */
  readonly config: { readonly requestTimeoutMs: number };
  /** The session port of the current connection (for the instrumentation hook). */
  readonly port: SessionPort;
  /** What watches the listings (`instrumentation`), if anything does. */
  readonly instrument: ClientInstrument | undefined;
  /** Reports a problem on the client's `error` event. */
  report(error: TaskError): void;
  /** Set once `close()` began: no page is read after it. */
  readonly closing: Promise<void> | undefined;
}

/** Most pages read by one listing. */
const MAX_PAGES = 10_000;

/**
 * One page of the server's tasks.
 * @throws TaskNotSupportedError when the server did not declare `tasks.list` ([R5]).
 * @throws TaskRpcError when the request fails after retries (an unknown cursor gives -32602).
 * @throws TaskClosedError once `close()` began (also for the next page of a listing under way).
 */
export function listPage(parts: ListingParts, cursor: string | undefined): Promise<TaskPage> {
  if (parts.closing !== undefined) return Promise.reject(new TaskClosedError('This TaskClient is closed'));
  const { engine } = parts;
  if (!engine.features.list) {
    // [E21]: the tasks extension has no listing at all; on 2025-11-25 it is a capability ([R5]).
    const why =
      engine.wire.kind === 'io.modelcontextprotocol/tasks'
        ? 'The io.modelcontextprotocol/tasks extension has no task listing: tasks.handles() gives the tasks this client tracks'
        : 'The server does not support tasks/list (no tasks.list capability)';
    return Promise.reject(new TaskNotSupportedError(why, { feature: 'list' }));
  }
  // Synchronously, in the caller's turn: its context (an active span) is still current.
  const instrument = instrumentList(parts.instrument, parts.port, engine.wire.kind, 'tasks/list');
  const timeoutMs = parts.config.requestTimeoutMs;
  // An entry left out of the page (an unknown status, no task id) is told on `error`, not lost unseen.
  const skipped = (error: TaskProtocolError): void => parts.report(error);
  return engine.retrying(undefined, (signal) =>
    engine.wire.listTasks(cursor, engine.requestOptions(timeoutMs, signal, undefined, instrument), skipped),
  );
}

/** Every task the server reports, page by page. Throws like {@link listPage}. */
export async function* listAll(parts: ListingParts): AsyncGenerator<Task, void, undefined> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result = await listPage(parts, cursor);
    yield* result.tasks;
    cursor = result.nextCursor;
    if (cursor === undefined || seen.has(cursor)) return;
    seen.add(cursor);
  }
}
