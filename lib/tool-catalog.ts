/**
 * The server's tools and their `execution.taskSupport`, read from every page of `tools/list`
 * (the SDK's own cache keeps only the last page: SDK note D9 in tasks-2025-11-25.md §7b), loaded once on demand, refreshed on
 * `notifications/tools/list_changed`, and re-read once for a tool name it does not know.
 */
import type { TaskSupport, TaskWire } from './wire/wire.js';

/** Most pages read in one listing; a server that pages forever is cut off here. */
const MAX_PAGES = 1_000;

/** Task support per tool name, loaded lazily. */
export class ToolCatalog {
  private tools: Map<string, TaskSupport> | undefined;
  private loading: Promise<Map<string, TaskSupport>> | undefined;
  private generation = 0;

  constructor(
    private readonly wire: () => TaskWire,
    private readonly timeoutMs: () => number,
  ) {}

  /** Forgets the cached list (on `notifications/tools/list_changed`). */
  invalidate(): void {
    this.tools = undefined;
    this.loading = undefined;
    this.generation += 1;
  }

  /**
   * The tool's task support; `undefined` when the server does not list it even after a refresh.
   * @throws TaskRpcError when `tools/list` fails.
   */
  async taskSupport(name: string): Promise<TaskSupport | undefined> {
    const tools = await this.load();
    if (tools.has(name)) return tools.get(name);
    this.invalidate();
    return (await this.load()).get(name);
  }

  private load(): Promise<Map<string, TaskSupport>> {
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

  private async readAll(): Promise<Map<string, TaskSupport>> {
    const tools = new Map<string, TaskSupport>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const result = await this.wire().listTools(cursor, { timeoutMs: this.timeoutMs() });
      for (const tool of result.tools) tools.set(tool.name, tool.taskSupport);
      cursor = result.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return tools;
  }
}
