/**
 * `mcp-task-client/doctor`: probes a task server and reports, rule by rule, where it departs
 * from the task specs (MCP 2025-11-25 tasks and the 2026 tasks extension) and how mcp-task-client
 * copes with it. `runDoctor` returns a plain report; `renderReport`, `reportJson` and `exitCode`
 * turn it into a terminal table, JSON and an exit code. See docs/doctor.md.
 */
export { runDoctor } from './doctor/run.js';
export { exitCode, renderReport, reportJson, type RenderOptions } from './doctor/render.js';
export type {
  Coping,
  DoctorOptions,
  DoctorProgress,
  DoctorReport,
  DoctorRow,
  DoctorTarget,
  DoctorWire,
  ReportSummary,
  Severity,
  TaskAccount,
  ToolChoice,
  TransportFactory,
  Verdict,
  WireSection,
} from './doctor/types.js';
export { TaskConnectError, type ConnectFailure } from './errors.js';
