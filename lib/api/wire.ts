/**
 * Public type of the task wires: which protocol form of MCP tasks a call runs on.
 */

/** The protocol form a task runs on. */
export type WireKind = '2025-11-25' | 'io.modelcontextprotocol/tasks';
