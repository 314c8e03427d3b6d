/**
 * `taskTools` and `taskTool`: a TaskClient's tools as Vercel AI SDK tools, each call run through
 * `callToolAsTask`.
 */
import { dynamicTool, jsonSchema, type JSONSchema7, type Tool } from 'ai';
import { TaskOptionError, type TaskClient } from '../index.js';
import { DEFAULT_MAX_ERROR_LENGTH, isErrorLength, withBoundedErrors } from './bound.js';
import { executeTaskTool, type ToolCallPlan } from './execute.js';
import { toolDefinitions, type ToolDefinition } from './listing.js';
import { toModelOutput } from './model-output.js';
import { isSafeName, safeNames } from './names.js';
import type { TaskToolOptions, TaskToolOutput, TaskToolOverride, TaskToolsOptions } from './types.js';

/**
 * An AI SDK tool made from an MCP tool: a dynamic tool (its schema is known at run time) whose
 * input is the tool's arguments and whose outputs are {@link TaskToolOutput}s.
 */
export type TaskTool = Tool<Record<string, unknown>, TaskToolOutput>;

/**
 * A tool set of task tools, keyed by the name the model calls each tool by (made safe for model
 * providers, see {@link taskTools}).
 */
export type TaskToolSet = Record<string, TaskTool>;

/** The AI SDK tool for one definition. */
function makeTool(tasks: TaskClient, definition: ToolDefinition, plan: ToolCallPlan): TaskTool {
  const description = plan.options.description ?? definition.description;
  const made = dynamicTool({
    ...(description === undefined ? {} : { description }),
    inputSchema: jsonSchema(definition.inputSchema as JSONSchema7),
    metadata: {
      source: 'mcp-task-client',
      toolName: definition.name,
      taskSupport: definition.taskSupport,
      ...(definition.title === undefined ? {} : { title: definition.title }),
    },
    execute: (input, execution) =>
      withBoundedErrors(
        executeTaskTool(tasks, plan, input, execution),
        plan.options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH,
      ),
    toModelOutput: ({ output }) => toModelOutput(output, plan.options.modelFileTypes),
  });
  return made as TaskTool;
}

/** The option keys of a tool's own options (everything but the set-level selection options). */
function toolOptions(options: TaskToolsOptions, override: TaskToolOverride | undefined): TaskToolOptions {
  const { include: _i, exclude: _e, tasksOnly: _t, prefix: _p, tools: _o, ...shared } = options;
  if (override === undefined) return shared;
  const { name: _n, ...own } = override;
  const merged: Record<string, unknown> = { ...shared };
  for (const [key, value] of Object.entries(own)) if (value !== undefined) merged[key] = value;
  return merged;
}

/**
 * The task support of tools that can run as tasks on this connection (`tasksOnly`): not
 * `forbidden`, nor `unavailable` (the tool could, but no call becomes a task here).
 */
const RUNS_AS_TASK: ReadonlySet<string> = new Set(['optional', 'required', 'server-decides']);

function check(condition: boolean, option: string, message: string): void {
  if (!condition) throw new TaskOptionError(message, { option });
}

/** Whether `value` is a valid `timeoutMs` or `ttlMs`: absent, or a finite number of ms, 0 or more. */
function isDuration(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isFinite(value) && value >= 0);
}

/** Whether `value` is a valid `modelFileTypes`: absent, or an array of media types (`type/subtype`, `type/*`). */
function isMediaTypeList(value: unknown): boolean {
  return (
    value === undefined ||
    (Array.isArray(value) && value.every((entry) => typeof entry === 'string' && /^[^\s/]+\/[^\s/]+$/.test(entry)))
  );
}

/** The set's options, checked before anything is listed. */
function checkOptions(options: TaskToolsOptions): void {
  check(typeof options === 'object' && options !== null, 'options', 'taskTools options must be an object');
  for (const key of ['include', 'exclude'] as const) {
    const names = options[key];
    check(
      names === undefined || (Array.isArray(names) && names.every((name) => typeof name === 'string')),
      key,
      `${key} must be an array of tool names`,
    );
  }
  check(options.prefix === undefined || typeof options.prefix === 'string', 'prefix', 'prefix must be a string');
  check(
    options.tools === undefined || (typeof options.tools === 'object' && options.tools !== null),
    'tools',
    'tools must be an object of per-tool options',
  );
  const overrides = Object.values(options.tools ?? {}) as Array<TaskToolOverride | null | undefined>;
  check(
    overrides.every((own) => own === undefined || (typeof own === 'object' && own !== null && !Array.isArray(own))),
    'tools',
    'each entry of tools must be an object of options for that tool',
  );
  // The tools wrap each callback, so a callback that is no function would only fail when a task
  // asks for input; a call option of the wrong type would fail every call the model makes: both
  // refused here, as the TaskClient refuses them.
  const typed = [
    ['onElicitation', 'function', 'a function'],
    ['onSampling', 'function', 'a function'],
    ['description', 'string', 'a string'],
    ['progress', 'boolean', 'a boolean'],
    ['requireTask', 'boolean', 'a boolean'],
    ['cancelOnAbort', 'boolean', 'a boolean'],
    ['cancelOnTimeout', 'boolean', 'a boolean'],
  ] as const;
  for (const [key, type, what] of typed) {
    check(
      [options, ...overrides].every((own) => own?.[key] === undefined || typeof own[key] === type),
      key,
      `${key} must be ${what}`,
    );
  }
  // A bad deadline or ttl fails here, not at each call the model makes.
  for (const key of ['timeoutMs', 'ttlMs'] as const) {
    check(
      isDuration(options[key]) && overrides.every((own) => isDuration(own?.[key])),
      key,
      `${key} must be a finite number of milliseconds, 0 or more`,
    );
  }
  check(
    isMediaTypeList(options.modelFileTypes) && overrides.every((own) => isMediaTypeList(own?.modelFileTypes)),
    'modelFileTypes',
    'modelFileTypes must be an array of media types, such as "image/png" or "audio/*"',
  );
  check(
    isErrorLength(options.maxErrorLength) && overrides.every((own) => isErrorLength(own?.maxErrorLength)),
    'maxErrorLength',
    'maxErrorLength must be a whole number of characters, 1 or more (or Infinity)',
  );
}

/** Refuses a `name` given to the tool `toolName` that is not one every model provider accepts (`option`: where it was given). */
function checkName(name: unknown, toolName: string, option: string): void {
  check(
    name === undefined || (typeof name === 'string' && isSafeName(name)),
    option,
    `The name ${JSON.stringify(name)} given to tool ${JSON.stringify(toolName)} is not one model providers accept: 1 to 64 letters, digits, "_" or "-", starting with a letter or "_"`,
  );
}

/** Most of the server's tool names an error about an unknown name lists. */
const LISTED_IN_ERROR = 20;

/**
 * The message for names the server does not list: with the names it does list, so that a typo
 * (`analyse` for `analyze`) shows at once.
 */
function noSuchTool(strangers: readonly string[], listed: ReadonlySet<string>): string {
  const quoted = (names: readonly string[]): string => names.map((name) => JSON.stringify(name)).join(', ');
  const names = [...listed];
  const some = names.length > LISTED_IN_ERROR ? `${quoted(names.slice(0, LISTED_IN_ERROR))}, …` : quoted(names);
  return `The server lists no tool named ${quoted(strangers)} (it lists ${names.length === 0 ? 'none' : some})`;
}

/** Names in `names` that the server does not list. */
function unknownNames(names: Iterable<string>, listed: ReadonlySet<string>): string[] {
  return [...names].filter((name) => !listed.has(name));
}

/**
 * The server's tools as an AI SDK tool set (`streamText({ tools })`, `generateText`, an `Agent`).
 * Each tool's `execute` calls the tool with `callToolAsTask`: as a task when the server and the
 * tool allow it, as a plain call otherwise. While a task runs, its status changes and progress are
 * yielded as preliminary results ({@link TaskToolStatus}: the UI sees them, the model does not);
 * the final result is the tool's content ({@link TaskToolResult}), which is what the model sees.
 * The AI SDK's `abortSignal` cancels the remote task; `timeoutMs` bounds each call. A result
 * with `isError` is passed to the model as the tool wrote it, whether the task ended `completed`
 * or `failed`; a task that failed without a result throws its `TaskFailedError` (the AI SDK
 * reports it as a `tool-error`, and the model reads the server's message, cut to `maxErrorLength`
 * characters). Input a task asks for (`input_required`) is answered by `onElicitation` /
 * `onSampling` here, or else by the TaskClient's callbacks. Input that none of them answers
 * cancels the task, and the tool fails with an error saying that it needs user input (on
 * 2025-11-25 the server's request also gets an error reply). A callback that throws does the same
 * on the tasks extension; on 2025-11-25 its error is the server's reply, and the task goes on or
 * fails on the server's terms.
 *
 * The tool set's keys are names every model provider accepts (1 to 64 letters, digits, `_` or
 * `-`, starting with a letter or `_`): prefix + the server's name when that is one; otherwise
 * other characters become `_`, a `_` goes in front of a leading digit or `-`, a name longer than
 * 64 is cut and ends with `_` and a short hash of the whole name, and a cleaned name that meets
 * another tool's ends with a hash of its own. The same listing always gives the same names; each
 * call sends the server's own name (the tool's metadata `toolName`). The set has no prototype, so
 * any name (`__proto__` too) is a plain key.
 *
 * The list is `TaskClient.tools()`'s: every page of `tools/list`, cached by the TaskClient until
 * the server says its tools changed (`notifications/tools/list_changed`); call again after that.
 * @throws TaskOptionError for invalid options, for `include` or `tools` entries that name a tool the
 *   server does not list, for a `name` in `tools` that is not a safe name, and when two tools would
 *   get the same name.
 * @throws TaskRpcError, TaskProtocolError, TaskClosedError when the tools cannot be listed.
 */
export async function taskTools(tasks: TaskClient, options: TaskToolsOptions = {}): Promise<TaskToolSet> {
  checkOptions(options);
  const definitions = await toolDefinitions(tasks);
  const listed = new Set(definitions.map((definition) => definition.name));
  const overrides = options.tools ?? {};
  const strangers = unknownNames([...(options.include ?? []), ...Object.keys(overrides)], listed);
  check(
    strangers.length === 0,
    options.include !== undefined && unknownNames(options.include, listed).length > 0 ? 'include' : 'tools',
    noSuchTool(strangers, listed),
  );
  const include = options.include === undefined ? undefined : new Set(options.include);
  const exclude = new Set(options.exclude ?? []);
  const chosen = definitions.filter(
    (definition) =>
      (include === undefined || include.has(definition.name)) &&
      !exclude.has(definition.name) &&
      (options.tasksOnly !== true || RUNS_AS_TASK.has(definition.taskSupport)),
  );
  const overrideOf = (definition: ToolDefinition): TaskToolOverride | undefined =>
    Object.hasOwn(overrides, definition.name) ? overrides[definition.name] : undefined;
  for (const definition of chosen) checkName(overrideOf(definition)?.name, definition.name, 'tools');
  const names = safeNames(
    chosen.map((definition) => overrideOf(definition)?.name ?? `${options.prefix ?? ''}${definition.name}`),
  );
  // No prototype: a tool named "__proto__" (or "constructor") is a key like any other.
  const set = Object.create(null) as TaskToolSet;
  const from = new Map<string, string>();
  chosen.forEach((definition, index) => {
    const aiName = names[index]!;
    const clash = from.get(aiName);
    check(
      clash === undefined,
      'tools',
      `Tools ${JSON.stringify(clash)} and ${JSON.stringify(definition.name)} would both be named ${JSON.stringify(aiName)}`,
    );
    from.set(aiName, definition.name);
    set[aiName] = makeTool(tasks, definition, {
      serverName: definition.name,
      aiName,
      options: toolOptions(options, overrideOf(definition)),
    });
  });
  return set;
}

/**
 * One of the server's tools as an AI SDK tool, like one entry of {@link taskTools}. `name` is the
 * server's name of the tool; the host puts the tool under a key of its own tool set, which is the
 * name the model calls it by. Model providers accept 1 to 64 letters, digits, `_` or `-`, starting
 * with a letter or `_` (a server name such as `files.read` is not one): pass the key as the
 * `name` option, which must be such a name, so that the input callbacks are told it
 * (`aiToolName`); without it they are told the server's name.
 * @throws TaskOptionError when the server lists no tool named `name`, for invalid options, and for
 *   a `name` option that is not a safe name.
 * @throws TaskRpcError, TaskProtocolError, TaskClosedError when the tools cannot be listed.
 */
export async function taskTool(tasks: TaskClient, name: string, options: TaskToolOverride = {}): Promise<TaskTool> {
  check(typeof name === 'string' && name !== '', 'name', 'taskTool needs the name of a tool');
  checkOptions(options);
  const { name: aiName, ...own } = options;
  checkName(aiName, name, 'name');
  const definitions = await toolDefinitions(tasks);
  const definition = definitions.find((candidate) => candidate.name === name);
  if (definition === undefined)
    throw new TaskOptionError(noSuchTool([name], new Set(definitions.map((candidate) => candidate.name))), {
      option: 'name',
    });
  return makeTool(tasks, definition, {
    serverName: name,
    aiName: aiName ?? name,
    options: toolOptions(own, undefined),
  });
}
