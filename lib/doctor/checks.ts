/**
 * The catalogue of the doctor's checks: for each, the rule it reads (an id of docs/spec-rules.md),
 * the rule in a few words, its strength, and what mcp-task-client does about it. Probes name a
 * check and say what they saw; the rest of a row comes from here, so that every run words a
 * check the same way. The rows of each wire are in v2025/checks.ts and ext/checks.ts.
 */
import type { CheckSpec } from './check-spec.js';
import { EXT } from './ext/checks.js';
import type { DoctorWire } from './types.js';
import { V2025 } from './v2025/checks.js';

/** The check `id` of `wire`. */
export function checkSpec(wire: DoctorWire, id: string): CheckSpec {
  const spec = (wire === '2025-11-25' ? V2025 : EXT)[id];
  if (spec === undefined) throw new Error(`mcp-task doctor: no check ${id} on ${wire}`);
  return spec;
}

/** Every check id of `wire`, in catalogue order. */
export function checkIds(wire: DoctorWire): string[] {
  return Object.keys(wire === '2025-11-25' ? V2025 : EXT);
}
