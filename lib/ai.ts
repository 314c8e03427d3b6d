/**
 * `mcp-task-client/ai`: a TaskClient's tools as Vercel AI SDK tools (`ai` 7, an optional peer
 * dependency). Each tool call runs through `callToolAsTask`, streams the task's status as
 * preliminary results, and is cancelled when the AI SDK aborts it. See docs/agents.md.
 */
export { taskTool, taskTools, type TaskTool, type TaskToolSet } from './ai/tools.js';
export { isTaskToolOutput } from './ai/guards.js';
export { DEFAULT_MODEL_FILE_TYPES } from './ai/model-output.js';
export type {
  TaskToolElicitationCallback,
  TaskToolInputContext,
  TaskToolMetadata,
  TaskToolOptions,
  TaskToolOutput,
  TaskToolOverride,
  TaskToolResult,
  TaskToolSamplingCallback,
  TaskToolsOptions,
  TaskToolStatus,
} from './ai/types.js';
