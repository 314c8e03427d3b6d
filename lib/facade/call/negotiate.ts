/**
 * Whether a call asks for a task: the client decides per tool on 2025-11-25 ([R6]-[R9]), from the
 * tool's task support (tools/list); the server decides on the extension ([E2]); on a connection
 * where no call becomes a task, a plain call, unless it cannot work ([E20]).
 */
import type { TaskEngine } from '../../engine/engine.js';
import { TaskNotSupportedError } from '../../errors.js';
import type { TaskHandle } from '../../api/index.js';
import type { ResolvedCallOptions } from '../options.js';
import type { ToolCatalog } from './tool-catalog.js';
import type { TaskSupport, WireFeatures } from '../../wire/wire.js';

/** The call being negotiated (a `Launch`): what it is, and the two ways to start it. */
export interface NegotiatingCall {
  readonly engine: TaskEngine;
  readonly call: ResolvedCallOptions;
  readonly toolName: string;
  /** Starts the call asking for a task (`support`: the tool's, or `optional` when the server decides). */
  startTask(support: TaskSupport): Promise<TaskHandle>;
  /** Starts the call as a plain call. */
  callPlain(): Promise<TaskHandle>;
  /** `promise`, raced against the call's signal, deadline and `close()`. */
  race<T>(promise: Promise<T>): Promise<T>;
}

/**
 * Decides whether to ask for a task, and starts the call accordingly. Not async: when the
 * decision needs no request, the call's promise is the start's own (no extra promise per call).
 */
export function negotiateAndStart(
  launch: NegotiatingCall,
  catalog: Pick<ToolCatalog, 'known' | 'taskSupport'>,
): Promise<TaskHandle> {
  const features = launch.engine.features;
  if (!features.tasks) return withoutTasks(launch, catalog, features);
  const asked = askedSupport(features, catalog, launch.toolName);
  if (asked !== undefined) return launch.startTask(asked);
  const known = catalog.known(launch.toolName);
  if (known !== undefined) return startAs(launch, known.taskSupport);
  return launch.race(catalog.taskSupport(launch.toolName)).then((support) => startAs(launch, support));
}

/**
 * The task support a call of `toolName` asks for a task with, when that is known now: on a
 * connection with tasks, `optional` where the server decides per call (opt in, and take whatever
 * it answers), or the tool's support as listed where it allows a task; `undefined` otherwise (not
 * listed yet, or a plain call).
 */
export function askedSupport(
  features: WireFeatures,
  catalog: Pick<ToolCatalog, 'known'>,
  toolName: string,
): TaskSupport | undefined {
  if (!features.tasks) return undefined;
  if (!features.toolNegotiation) return 'optional';
  const support = catalog.known(toolName)?.taskSupport;
  return support === 'optional' || support === 'required' ? support : undefined;
}

/** Starts the call per the tool's task support on 2025-11-25 (`undefined`: the tool is not listed). */
function startAs(launch: NegotiatingCall, support: TaskSupport | undefined): Promise<TaskHandle> {
  const { call, toolName } = launch;
  if (support === 'optional' || support === 'required') return launch.startTask(support);
  if (call.requireTask) {
    throw new TaskNotSupportedError(
      support === undefined
        ? `Tool "${toolName}" is not listed by the server (tools/list), so it cannot be called as a task`
        : `Tool "${toolName}" does not support task mode (execution.taskSupport is ${support})`,
      { feature: 'tool', toolName },
    );
  }
  return launch.callPlain();
}

/** No call becomes a task on this connection: a plain call, unless it cannot work. */
async function withoutTasks(
  launch: NegotiatingCall,
  catalog: Pick<ToolCatalog, 'known' | 'taskSupport'>,
  features: WireFeatures,
): Promise<TaskHandle> {
  const { call, toolName } = launch;
  if (call.requireTask)
    throw new TaskNotSupportedError(launch.engine.wire.unsupportedReason(), { feature: 'tasks', toolName });
  // [E20]: the server offers tasks only in a form this connection cannot use. A tool it lists
  // as task-only would be refused as a plain call: say so, and how to fix it, before sending.
  if (features.tasksElsewhere && features.toolNegotiation) {
    const known = catalog.known(toolName);
    const support = known !== undefined ? known.taskSupport : await launch.race(catalog.taskSupport(toolName));
    if (support === 'required') {
      throw new TaskNotSupportedError(
        `Tool "${toolName}" runs only as a task (execution.taskSupport is required), and no call becomes a task on this connection. ${launch.engine.wire.unsupportedReason()}`,
        { feature: 'tasks', toolName },
      );
    }
  }
  return launch.callPlain();
}
