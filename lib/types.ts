/**
 * Public data types shared by every module, in one place. Wire-neutral: every wire maps its
 * messages onto these shapes. The MCP shapes (tool results, elicitation and sampling) are the
 * library's own structural types, so that no SDK has to be installed to type-check against them;
 * the SDKs' own values fit them.
 */

/** A JSON object, as MCP messages carry them. */
export type JsonObject = { [key: string]: unknown };

/** Text in a tool result or a message. */
export type TextContent = {
  /** Marks a text block. */
  readonly type: 'text';
  /** The text itself. */
  readonly text: string;
  readonly [key: string]: unknown;
};
/** An image (base64 `data`). */
export type ImageContent = {
  /** Marks an image block. */
  readonly type: 'image';
  /** The image bytes, base64-encoded. */
  readonly data: string;
  /** The image format as a MIME type (e.g. `image/png`). */
  readonly mimeType: string;
  readonly [key: string]: unknown;
};
/** Audio (base64 `data`). */
export type AudioContent = {
  /** Marks an audio block. */
  readonly type: 'audio';
  /** The audio bytes, base64-encoded. */
  readonly data: string;
  /** The audio format as a MIME type (e.g. `audio/wav`). */
  readonly mimeType: string;
  readonly [key: string]: unknown;
};
/** A link to a resource. */
export type ResourceLink = {
  /** Marks a resource link block. */
  readonly type: 'resource_link';
  /** Where the resource is; the client may read it from the server (`resources/read`) or elsewhere. */
  readonly uri: string;
  /** The resource's name (an identifier; a display title, if any, rides in other fields). */
  readonly name: string;
  readonly [key: string]: unknown;
};
/** A resource embedded in the result. */
export type EmbeddedResource = {
  /** Marks an embedded resource block. */
  readonly type: 'resource';
  /** The resource's contents: text in `text`, or binary data in `blob`. */
  readonly resource: {
    /** The resource's URI. */
    readonly uri: string;
    /** The contents' MIME type, if known. */
    readonly mimeType?: string | undefined;
    /** The contents, for a text resource. */
    readonly text?: string | undefined;
    /** The contents base64-encoded, for a binary resource. */
    readonly blob?: string | undefined;
    readonly [key: string]: unknown;
  };
  readonly [key: string]: unknown;
};
/** One block of a tool result's content. */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** What a tool call returns (`isError: true` marks a tool-level failure). */
export type CallToolResult = {
  /** The result as content blocks (text, images, resources, ...); may be empty. */
  readonly content: ContentBlock[];
  /** The result as one JSON object, for tools that declare an output schema (it should match it). */
  readonly structuredContent?: JsonObject | undefined;
  /**
   * `true` when the tool itself failed; `content` then describes the failure. Absent means
   * `false`. A protocol error is not reported this way but as a JSON-RPC error.
   */
  readonly isError?: boolean | undefined;
  /** Metadata the server attached to the result, outside the result proper. */
  readonly _meta?: JsonObject | undefined;
  readonly [key: string]: unknown;
};

/** The params of an elicitation request (`elicitation/create`): a form, or a URL to visit. */
export type ElicitRequestParams = {
  /** `form` (the default) asks for values matching `requestedSchema`; `url` asks the user to visit `url`. */
  readonly mode?: 'form' | 'url' | undefined;
  /** What to ask the user. */
  readonly message: string;
  /** The form: a flat object schema of primitive fields (form mode). */
  readonly requestedSchema?:
    | {
        /** `object`: the form is one JSON object. */
        readonly type: 'object' | undefined;
        /** The form's fields by name, each a JSON Schema of a primitive value (string, number, boolean, enum). */
        readonly properties: { readonly [name: string]: JsonObject };
        /** The names of the fields the user must fill in. */
        readonly required?: readonly string[] | undefined;
        readonly [key: string]: unknown;
      }
    | undefined;
  /** The page to visit (url mode). */
  readonly url?: string | undefined;
  /** The server's id for a url-mode elicitation. */
  readonly elicitationId?: string | undefined;
  /**
   * Metadata of the request; for input a task needs on the 2025-11-25 wire, it names that task
   * under `io.modelcontextprotocol/related-task`.
   */
  readonly _meta?: JsonObject | undefined;
  readonly [key: string]: unknown;
};

/** The answer to an elicitation. */
export type ElicitResult = {
  /** `accept` with `content`, or `decline` / `cancel` without. */
  readonly action: 'accept' | 'decline' | 'cancel';
  /** The values the user gave (form mode). */
  readonly content?: { readonly [name: string]: string | number | boolean | readonly string[] } | undefined;
  /** Metadata attached to the answer, outside the answer proper. */
  readonly _meta?: JsonObject | undefined;
  readonly [key: string]: unknown;
};

/** A model's request to call a tool, in a sampling exchange. */
export type ToolUseContent = {
  /** Marks a tool use block. */
  readonly type: 'tool_use';
  /** This call's id; the matching {@link ToolResultContent} repeats it as `toolUseId`. */
  readonly id: string;
  /** The tool the model wants to call. */
  readonly name: string;
  /** The arguments for the tool. */
  readonly input: JsonObject;
  readonly [key: string]: unknown;
};
/** The result of a tool call, handed back to the model. */
export type ToolResultContent = {
  /** Marks a tool result block. */
  readonly type: 'tool_result';
  /** The `id` of the {@link ToolUseContent} this answers. */
  readonly toolUseId: string;
  /** What the tool returned (content blocks on the wire; not checked by this library). */
  readonly content: unknown;
  readonly [key: string]: unknown;
};
/** One block of a sampling message. */
export type SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent;

/** One message of a sampling request. */
export type SamplingMessage = {
  /** Who speaks: the `user`, or the model (`assistant`). */
  readonly role: 'user' | 'assistant';
  /** What is said: one content block, or several. */
  readonly content: SamplingContent | SamplingContent[];
  readonly [key: string]: unknown;
};

/** The params of a sampling request (`sampling/createMessage`). */
export type CreateMessageRequestParams = {
  /** The conversation so far, oldest first, for the model to continue. */
  readonly messages: readonly SamplingMessage[];
  /** The most tokens the model may generate; the client may generate fewer. */
  readonly maxTokens: number;
  /** The system prompt the server asks for; the client may change or drop it. */
  readonly systemPrompt?: string | undefined;
  /** The sampling temperature the server asks for, if any. */
  readonly temperature?: number | undefined;
  /** Strings that end generation when the model produces them. */
  readonly stopSequences?: readonly string[] | undefined;
  /**
   * The server's wishes for choosing a model (name hints, priorities of cost, speed and
   * intelligence); advisory, the client picks the model.
   */
  readonly modelPreferences?: JsonObject | undefined;
  /**
   * Metadata of the request; for input a task needs on the 2025-11-25 wire, it names that task
   * under `io.modelcontextprotocol/related-task`.
   */
  readonly _meta?: JsonObject | undefined;
  readonly [key: string]: unknown;
};

/** The answer to a sampling request. */
export type CreateMessageResult = {
  /** Who speaks in the produced message: normally `assistant` (the model). */
  readonly role: 'user' | 'assistant';
  /** A content block (e.g. `{ type: 'text', text }`), or several. */
  readonly content: SamplingContent | SamplingContent[];
  /** The model that produced it. */
  readonly model: string;
  /** Why generation stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or another reason. */
  readonly stopReason?: string | undefined;
  /** Metadata attached to the answer, outside the answer proper. */
  readonly _meta?: JsonObject | undefined;
  readonly [key: string]: unknown;
};

/**
 * The five statuses of a task. `completed`, `failed` and `cancelled` are terminal: a task never
 * leaves them.
 */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The terminal subset of {@link TaskStatus}. */
export type TerminalTaskStatus = 'completed' | 'failed' | 'cancelled';

/**
 * One snapshot of a task as the server reported it (the wire `Task` object), after lenient
 * normalisation: a missing `ttl` becomes `null`, an absent or unusable `pollInterval` is left out.
 * Snapshots are immutable; every change produces a new object.
 */
export interface Task {
  /** Server-generated id. Treat it as a secret: whoever knows it can read the result. */
  readonly taskId: string;
  /** Current status. */
  readonly status: TaskStatus;
  /** Human-readable progress, reason or diagnostic, if the server sent one. */
  readonly statusMessage?: string | undefined;
  /** ISO 8601 creation time on the server's clock. */
  readonly createdAt: string;
  /** ISO 8601 time of the last update on the server's clock. */
  readonly lastUpdatedAt: string;
  /** Retention from creation in milliseconds; `null` means unlimited or not reported. */
  readonly ttl: number | null;
  /** Suggested polling interval in milliseconds, if the server gave one. */
  readonly pollInterval?: number | undefined;
}

/** One page of the server's tasks (`TaskClient.listPage`). */
export interface TaskPage {
  /** The tasks on this page. */
  readonly tasks: readonly Task[];
  /** Pass back unchanged for the next page (opaque); absent on the last page. */
  readonly nextCursor?: string | undefined;
}

/** A JSON-RPC error object as the server sent it. */
export interface JsonRpcErrorInfo {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The server's message. */
  readonly message: string;
  /** The error's `data`, if any. */
  readonly data?: unknown;
}

/**
 * A source of time and timers. Inject one to make tests deterministic; the default reads
 * `Date.now()` but never goes back (after a step back of the machine's clock it goes on from its
 * last reading), and uses `setTimeout` and `clearTimeout`.
 *
 * The library keeps at most one timer of the clock armed per client. A token with Node's
 * `ref()`/`unref()` methods is unref'd while only background work is due; when nothing is due
 * any more such a token may stay armed, unref'd, until it fires (it then finds nothing to do),
 * which spares setting a new timer for the next request. Other tokens are cleared as soon as
 * nothing is due. `close()` clears the timer in every case. Any numbers `now()` returns
 * (fractions, negative or very large values) are kept exactly.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds; returns a token for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer made by {@link Clock.setTimeout}. */
  clearTimeout(token: unknown): void;
}

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminalStatus(status: TaskStatus): status is TerminalTaskStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/**
 * A transport of either MCP SDK (stdio, Streamable HTTP, in-memory, ...). Structural: no SDK is
 * imported, and both SDKs' transports fit.
 */
export interface McpTransport {
  /** Opens the transport (the SDK client calls it when it connects). */
  start(): Promise<void>;
  /** Sends a JSON-RPC message (typed loosely: each SDK types its messages its own way). */
  send(message: never, options?: never): Promise<void>;
  /** Closes the transport. */
  close(): Promise<void>;
  /** Receives each incoming message (set by the SDK client; the library chains onto it). */
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  /** Called when the transport closed. */
  onclose?: (() => void) | undefined;
  /** Called on transport errors. */
  onerror?: ((error: Error) => void) | undefined;
  /** The Streamable HTTP session id, if any. */
  readonly sessionId?: string | undefined;
}

/**
 * A connected MCP SDK client: `Client` from `@modelcontextprotocol/sdk` 1.x (^1.24.1) or from
 * `@modelcontextprotocol/client` 2.x (^2.1). Structural: the library tells the two apart itself.
 */
export interface McpClient {
  /** The connected transport; `undefined` before `connect` and after `close`. */
  readonly transport?: McpTransport | undefined;
  /** What the server declared when it connected. */
  getServerCapabilities(): unknown;
  /** The server's name and version. */
  getServerVersion(): unknown;
  /** Closes the connection. */
  close(): Promise<void>;
}
