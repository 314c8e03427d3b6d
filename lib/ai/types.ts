/**
 * Public types of the Vercel AI SDK integration (`mcp-task-client/ai`): what a task tool yields,
 * and the options of `taskTools` and `taskTool`.
 */
import type {
  ContentBlock,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  InputContext,
  JsonObject,
  TaskProgress,
  TaskStatus,
  ToolTaskSupport,
} from '../index.js';

/**
 * A preliminary result of a task tool: the task's state after a status change or a progress
 * notification. The AI SDK streams it to the UI as a tool output with `preliminary: true`; the
 * model never sees it. It carries no task id (task ids are secrets, and tool outputs end up in the
 * browser).
 */
export interface TaskToolStatus {
  /** Marks a status. */
  readonly type: 'status';
  /** The task's status (`working` before the server's first snapshot, and for a plain call). */
  readonly status: TaskStatus;
  /** The server's latest status message, if it sent one (the task id in it replaced by its fingerprint). */
  readonly statusMessage?: string;
  /**
   * The latest progress notification of the call, if the server sent one (the task id in its
   * message replaced by its fingerprint).
   */
  readonly progress?: TaskProgress;
}

/**
 * The final result of a task tool: the tool's `CallToolResult`, reduced to what a model and a UI
 * use, its content as the server wrote it (a task id the server put in it stays there).
 * `isError: true` when the tool reported its own error in its result, whether the task ended
 * `completed` or `failed` (a task that failed without a result throws instead: see `taskTools`).
 */
export interface TaskToolResult {
  /** Marks the final result. */
  readonly type: 'result';
  /**
   * The result's content blocks (text, images, audio, resources). For a task that ended `failed`
   * with a result that has no text, led by a text block with the failure and the server's status
   * message (`Tool "x" failed: quota exceeded`), so that the reason is not lost.
   */
  readonly content: readonly ContentBlock[];
  /** The result as one JSON object, for tools that declare an output schema. */
  readonly structuredContent?: JsonObject;
  /** Present (and `true`) when the tool reported an error in its result. */
  readonly isError?: true;
}

/** What a task tool yields: status snapshots while it runs, then one final result. */
export type TaskToolOutput = TaskToolStatus | TaskToolResult;

/** What an input callback of a task tool learns: the library's context, plus the AI SDK tool call. */
export interface TaskToolInputContext extends InputContext {
  /** The AI SDK's id of the tool call that asks: the id of its tool part in the UI. */
  readonly toolCallId: string;
  /**
   * The name the model calls the tool by: the tool set's key (`taskTool`: its `name` option, else
   * the server's name); `toolName` is the server's name.
   */
  readonly aiToolName: string;
}

/** Answers an elicitation a task tool's task asks for. */
export type TaskToolElicitationCallback = (
  params: ElicitRequestParams,
  context: TaskToolInputContext,
) => ElicitResult | Promise<ElicitResult>;

/** Answers a sampling request a task tool's task asks for. */
export type TaskToolSamplingCallback = (
  params: CreateMessageRequestParams,
  context: TaskToolInputContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

/** Options of one task tool: how each of its calls runs. */
export interface TaskToolOptions {
  /**
   * Deadline of each call, from the call until the result is in hand; when it passes, the remote
   * task is cancelled and the tool fails with `TaskTimeoutError`.
   * @defaultValue the TaskClient's `timeoutMs`
   */
  readonly timeoutMs?: number | undefined;
  /** Requested ttl of each task, in ms. @defaultValue the TaskClient's `ttlMs` */
  readonly ttlMs?: number | undefined;
  /**
   * Fail instead of running the tool as a plain call when no task can be had.
   * @defaultValue the TaskClient's `requireTask`
   */
  readonly requireTask?: boolean | undefined;
  /**
   * Cancel the remote task when the AI SDK aborts the call (its `abortSignal`), or when the tool's
   * output stops being read; `false` leaves the task running. It also applies to a timeout of the
   * AI SDK (`timeout.toolMs` and the like) when this tool sets no `cancelOnTimeout`.
   * @defaultValue the TaskClient's `cancelOnAbort`
   */
  readonly cancelOnAbort?: boolean | undefined;
  /**
   * Cancel the remote task when `timeoutMs` passes; `false` leaves the task running. Set here, it
   * also applies when a timeout of the AI SDK (`timeout.toolMs`, `timeout.tools.<name>Ms`,
   * `stepMs`, `totalMs`, whose aborts carry a `TimeoutError`) stops the call once its task exists.
   * Either way the call fails with a `TaskTimeoutError`. The TaskClient's own `cancelOnTimeout`
   * applies to `timeoutMs` only: the TaskClient sees the AI SDK's timeout as an abort of the call's
   * signal, so without this option that follows `cancelOnAbort`.
   * @defaultValue the TaskClient's `cancelOnTimeout`
   */
  readonly cancelOnTimeout?: boolean | undefined;
  /**
   * Ask the server for progress notifications (a `progressToken` is sent) and yield each as a
   * status. Servers on the tasks extension send none.
   * @defaultValue true
   */
  readonly progress?: boolean | undefined;
  /**
   * Answers elicitations of this tool's tasks; without it, the TaskClient's `onElicitation`
   * answers. On 2025-11-25 the SDK client must have declared the `elicitation` capability.
   */
  readonly onElicitation?: TaskToolElicitationCallback | undefined;
  /**
   * Answers sampling requests of this tool's tasks; without it, the TaskClient's `onSampling`
   * answers. On 2025-11-25 the SDK client must have declared the `sampling` capability.
   */
  readonly onSampling?: TaskToolSamplingCallback | undefined;
  /** The description the model sees. @defaultValue the server's description of the tool */
  readonly description?: string | undefined;
  /**
   * Most characters of a failed call's error message that the model reads (a task that failed
   * with a JSON-RPC error, a cancelled or expired task, unanswered input, …). The AI SDK hands the
   * model a tool's error as its name and message, past `toModelOutput`, and the message may carry
   * a server's text of any length. A longer message is cut, ending in `…`, in a copy of the error
   * (same class and fields): the full text stays in its fields (`rpcError`, `statusMessage`,
   * `cause`). `Infinity` cuts nothing.
   * @defaultValue 4000
   */
  readonly maxErrorLength?: number | undefined;
  /**
   * The media types of the images, audio clips and binary resources of a result that the model
   * is given as files (`image/png`, or `audio/*` for every audio type). A block of any other type
   * reaches the model as a line of text that says what it was and that it is not shown, such as
   * `[audio/wav, 48 KB, not shown]`: model providers take only some file types in a tool result,
   * and one they do not take fails the next model call (or is dropped without a word). Widen the
   * list to what your provider and model take, e.g.
   * `[...DEFAULT_MODEL_FILE_TYPES, 'audio/wav']`. The UI gets the result's blocks whatever this
   * says.
   * @defaultValue `DEFAULT_MODEL_FILE_TYPES`: `image/png`, `image/jpeg`, `image/gif`, `image/webp`
   *   and `application/pdf`
   */
  readonly modelFileTypes?: readonly string[] | undefined;
}

/**
 * Options of one tool, an entry of `taskTools`' `tools` or the options of `taskTool`: its own call
 * options, and the name the model calls it by.
 */
export interface TaskToolOverride extends TaskToolOptions {
  /**
   * The key of the tool in the tool set, which the model calls it by: 1 to 64 letters, digits, `_`
   * or `-`, starting with a letter or `_` (what every model provider accepts). `taskTools` puts
   * the tool under it. `taskTool` cannot see the key you put its tool under: give it here, and
   * the input callbacks are told it (`aiToolName`).
   * @defaultValue in `taskTools`, prefix + the server's name, made safe (see `taskTools`); in
   *   `taskTool`, the server's name
   */
  readonly name?: string | undefined;
}

/** Options of `taskTools`: which tools, their names, and how their calls run. */
export interface TaskToolsOptions extends TaskToolOptions {
  /** Only these tools (the server's names). Each must be listed by the server. @defaultValue every tool */
  readonly include?: readonly string[] | undefined;
  /** Leave these tools out (the server's names). */
  readonly exclude?: readonly string[] | undefined;
  /**
   * Only tools that can run as tasks on this connection (`optional`, `required` or
   * `server-decides`): plain tools (`forbidden`) and tools no call of which becomes a task here
   * (`unavailable`) are left out.
   * @defaultValue false (plain tools are included and run as plain calls)
   */
  readonly tasksOnly?: boolean | undefined;
  /**
   * Put before every tool's name in the tool set, e.g. `'reports_'` (made safe with the name, see
   * `taskTools`). @defaultValue ''
   */
  readonly prefix?: string | undefined;
  /**
   * Per-tool options by the server's name, over the options above (e.g. a longer `timeoutMs` for
   * one slow tool, or another `name`). Each must name a tool the server lists.
   */
  readonly tools?: Readonly<Record<string, TaskToolOverride>> | undefined;
}

/** What the tool set's metadata says of each tool (the AI SDK copies it onto tool parts as `toolMetadata`). */
export interface TaskToolMetadata {
  /** Marks tools made by this library. */
  readonly source: 'mcp-task-client';
  /** The server's name of the tool. */
  readonly toolName: string;
  /** Whether it can run as a task, as `TaskClient.tools()` says. */
  readonly taskSupport: ToolTaskSupport['taskSupport'];
  /** Its title, if the server gave one. */
  readonly title?: string;
}
