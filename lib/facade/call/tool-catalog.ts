/**
 * The server's tools and their `execution.taskSupport`, read from every page of `tools/list`
 * (the SDK's own cache keeps only the last page, [S9]), loaded
 * once on demand and refreshed on `notifications/tools/list_changed`. A name the list does not
 * have causes one re-read (shared by concurrent callers); a name still unknown after it is
 * remembered as unknown until the list changes, so a misspelled tool does not re-list every call.
 * Also `TaskClient.tools()`, which reports them.
 */
import type { ClientInstrument, ToolTaskSupport } from '../../api/index.js';
import type { TaskEngine } from '../../engine/engine.js';
import { TaskClosedError, TaskProtocolError } from '../../errors.js';
import { paramHeaders, scanParamHeaders, type ParamHeader } from '../../port/param-headers.js';
import type { SessionPort } from '../../port/port.js';
import { raceAbort } from '../../util/abort.js';
import type { TaskSupport, ToolPage, WireFeatures } from '../../wire/wire.js';
import { instrumentList } from '../events/instrumentation.js';

/** One listed tool. */
export type ToolEntry = ToolPage['tools'][number];

/** Most pages read in one listing; a server that pages forever is cut off here. */
const MAX_PAGES = 1_000;

/**
 * What `TaskClient.tools()` reports of listed tools: each tool's own task support where the client
 * negotiates per tool (2025-11-25), else the same answer for every tool; `unavailable`, with the
 * reason, for a tool that could run as a task but cannot on this connection.
 * @param unsupportedReason - why no call becomes a task here (when `features.tasks` is false).
 */
export function toolSupport(
  tools: Iterable<ToolEntry>,
  features: Pick<WireFeatures, 'tasks' | 'tasksElsewhere' | 'toolNegotiation'>,
  unsupportedReason: string,
): ToolTaskSupport[] {
  // On the extension the server decides per call; without the extension no call can become a
  // task there ([E20]: every call is plain), which is what `forbidden` says.
  const decided: ToolTaskSupport['taskSupport'] = features.tasks ? 'server-decides' : 'forbidden';
  const support = (
    tool: ToolEntry,
  ): Pick<ToolTaskSupport, 'taskSupport' | 'declaredTaskSupport' | 'unavailableReason'> => {
    if (!features.toolNegotiation) return { taskSupport: decided };
    // [E20]: a server offering tasks only through the extension, on a legacy session: any of its
    // tools may run as a task on a modern one. A tool declaring task support on a server without
    // the tasks capability cannot run as one either ([R6]).
    const unavailable = features.tasksElsewhere || (!features.tasks && tool.taskSupport !== 'forbidden');
    if (!unavailable) return { taskSupport: tool.taskSupport };
    return { taskSupport: 'unavailable', declaredTaskSupport: tool.taskSupport, unavailableReason: unsupportedReason };
  };
  return [...tools].map((tool) => ({
    name: tool.name,
    ...support(tool),
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.inputSchema === undefined ? {} : { inputSchema: tool.inputSchema }),
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
  }));
}

/** The error of a client-wide operation that `close()` interrupted. */
function closedDuring(operation: string, cause?: unknown): TaskClosedError {
  return new TaskClosedError(`The TaskClient was closed during ${operation}`, cause === undefined ? {} : { cause });
}

/** The parts of its TaskClient that the catalog and `tools()` use (see facade/parts.ts). */
export interface CatalogParts {
  /** The wire of the current connection lists the tools; its timers time `tools/list` out. */
  readonly engine: TaskEngine;
  /** `requestTimeoutMs`: the timeout of each `tools/list` request. */
  readonly config: { readonly requestTimeoutMs: number };
  /**
   * Aborted when `close()` begins: a `tools/list` still open is cancelled (its timeout runs on the
   * engine's timers, which close() stops), and `tools()` rejects at once.
   */
  readonly closeSignal: AbortController;
  /** Set once `close()` began. */
  readonly closing: Promise<void> | undefined;
  /** The session port of the current connection (for the instrumentation hook). */
  readonly port: SessionPort;
  /** What watches the listings (`instrumentation`), if anything does. */
  readonly instrument: ClientInstrument | undefined;
}

/**
 * `TaskClient.tools()`: every tool in the catalog with its task support on the current wire.
 * @throws TaskRpcError when `tools/list` fails.
 * @throws TaskClosedError after `close()`, and when `close()` runs while the list is being read.
 */
export async function listedTools(parts: CatalogParts & { readonly catalog: ToolCatalog }): Promise<ToolTaskSupport[]> {
  const { catalog, engine } = parts;
  const isClosed = (): boolean => parts.closing !== undefined;
  // TaskClient's check that it is open, as a rejection.
  if (isClosed()) throw new TaskClosedError('This TaskClient is closed');
  let all: ReadonlyMap<string, ToolEntry>;
  try {
    all = await raceAbort(catalog.all(), parts.closeSignal.signal, () => closedDuring('tools()'));
  } catch (error) {
    // Whatever the request ran into once close() began (an aborted request), the client was closed.
    if (isClosed() && !(error instanceof TaskClosedError)) throw closedDuring('tools()', error);
    throw error;
  }
  return toolSupport(all.values(), engine.features, engine.wire.unsupportedReason());
}

/** Task support per tool name, loaded lazily. */
export class ToolCatalog {
  private tools: Map<string, ToolEntry> | undefined = undefined;
  /** Each listed tool's `x-mcp-header` declarations, read once from its schema ([E32]). */
  private readonly declared = new WeakMap<ToolEntry, readonly ParamHeader[]>();
  private loading: Promise<Map<string, ToolEntry>> | undefined = undefined;
  private generation = 0;
  /** Names not in the list after a re-read made for them. */
  private readonly unknown = new Set<string>();

  constructor(private readonly parts: CatalogParts) {}

  /** Forgets the cached list (on `notifications/tools/list_changed`). */
  invalidate(): void {
    this.tools = undefined;
    this.loading = undefined;
    this.generation += 1;
    this.unknown.clear();
  }

  /**
   * The tool's task support; `undefined` when the server does not list it even after a refresh.
   * @throws TaskRpcError when `tools/list` fails.
   */
  async taskSupport(name: string): Promise<TaskSupport | undefined> {
    return (await this.entry(name))?.taskSupport;
  }

  /** The tool named `name` if the cached list has it (no promise: the usual case once listed). */
  known(name: string): ToolEntry | undefined {
    return this.tools?.get(name);
  }

  /** The cached list itself, if one is held: what {@link ToolCatalog.paramHeaders} read. */
  get listing(): ReadonlyMap<string, ToolEntry> | undefined {
    return this.tools;
  }

  /**
   * The `Mcp-Param-*` headers of a call of `name` with `args` ([E32]), from `tools` (the cached
   * list by default): none when no list is held or it lacks the tool (no `tools/list` is read for
   * them; a server that wanted some refuses the call, and {@link ToolCatalog.relisted} recovers).
   */
  paramHeaders(
    name: string,
    args: Readonly<Record<string, unknown>>,
    tools = this.tools,
  ): Record<string, string> | undefined {
    const tool = tools?.get(name);
    if (tool === undefined) return undefined;
    let declared = this.declared.get(tool);
    if (declared === undefined) this.declared.set(tool, (declared = scanParamHeaders(tool.inputSchema) ?? []));
    return paramHeaders(declared, args);
  }

  /**
   * After the server refused a call's headers ([E33]): the headers of a call of `name` with `args`
   * from a list read after `stale` (the list the call's headers came from, `undefined` for none).
   * The list is read again only if it is still `stale`; calls refused together share one read.
   * @throws TaskRpcError when `tools/list` fails.
   */
  async relisted(
    name: string,
    args: Readonly<Record<string, unknown>>,
    stale: ReadonlyMap<string, unknown> | undefined,
  ): Promise<Record<string, string> | undefined> {
    if (stale !== undefined && this.tools === stale) this.invalidate();
    return this.paramHeaders(name, args, await this.load());
  }

  /** The listed tool named `name`, after a refresh if needed. */
  private async entry(name: string): Promise<ToolEntry | undefined> {
    const cached = this.tools;
    // A list read (or being read) after this call began is fresh: a miss there is final.
    const tools = cached ?? (await this.load());
    if (tools.has(name) || this.unknown.has(name)) return tools.get(name);
    let fresh = tools;
    if (cached !== undefined) {
      if (this.tools === cached) {
        this.tools = undefined;
        this.loading = undefined;
        this.generation += 1;
      }
      fresh = await this.load();
    }
    if (!fresh.has(name)) this.unknown.add(name);
    return fresh.get(name);
  }

  /**
   * Every tool the server lists, with its task support (read once, then cached until the list
   * changes).
   * @throws TaskRpcError when `tools/list` fails.
   */
  async all(): Promise<ReadonlyMap<string, ToolEntry>> {
    return this.tools ?? (await this.load());
  }

  private load(): Promise<Map<string, ToolEntry>> {
    if (this.tools !== undefined) return Promise.resolve(this.tools);
    if (this.loading === undefined) {
      const generation = this.generation;
      const loading = this.readAll().then(
        (tools) => {
          if (this.generation === generation) this.tools = tools;
          return tools;
        },
        (error: unknown) => {
          if (this.loading === loading) this.loading = undefined;
          throw error;
        },
      );
      this.loading = loading;
    }
    return this.loading;
  }

  /**
   * False for a tool a client that sends `Mcp-Param-*` headers must leave out of its tool list
   * ([E34]): one whose `inputSchema` breaks a rule of `x-mcp-header`, which it could not call as
   * the server expects. It is reported on `error`, naming the tool, and every other tool stays.
   * On a connection that sends no such headers (stdio, the legacy era) the annotation is ignored.
   */
  private usable(tool: ToolEntry): boolean {
    if (!this.parts.port.sendsHeaders()) return true;
    const declared = scanParamHeaders(tool.inputSchema);
    if (declared !== undefined) {
      this.declared.set(tool, declared);
      return true;
    }
    this.parts.engine.report(
      new TaskProtocolError(
        `Tool "${tool.name}" is left out of the tool list: an x-mcp-header in its inputSchema breaks the rules`,
        { method: 'tools/list', toolName: tool.name },
      ),
      undefined,
    );
    return false;
  }

  private async readAll(): Promise<Map<string, ToolEntry>> {
    const tools = new Map<string, ToolEntry>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const { engine, config, closeSignal } = this.parts;
      // Before the page's first await: the first page is asked for in the turn of the caller
      // that started the read, whose context (an active span) is still current.
      const instrument = instrumentList(this.parts.instrument, this.parts.port, engine.wire.kind, 'tools/list');
      const result = await engine.wire.listTools(
        cursor,
        engine.requestOptions(config.requestTimeoutMs, closeSignal.signal, undefined, instrument),
      );
      for (const tool of result.tools) if (this.usable(tool)) tools.set(tool.name, tool);
      cursor = result.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return tools;
  }
}
