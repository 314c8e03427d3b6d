/**
 * The shape of one of the doctor's checks (the rule it reads, its strength, the rule in a few
 * words, what mcp-task-client does about it, what is lost when the server deviates), and the
 * helper the catalogues of each wire (v2025/checks.ts, ext/checks.ts) write their rows with.
 */
import type { Severity } from './types.js';

/** One check. */
export interface CheckSpec {
  readonly rule: string;
  readonly quote: string;
  readonly severity: Severity;
  /** What the library does about this behaviour (either way). */
  readonly copes: string;
  /** What is lost when the server deviates and the library cannot make up for it; absent when it can. */
  readonly lost?: string | undefined;
}

/** One row of a catalogue: the rule, its strength, its words, what the library does, what is lost. */
export const c = (rule: string, severity: Severity, quote: string, copes: string, lost?: string): CheckSpec => ({
  rule,
  severity,
  quote,
  copes,
  lost,
});
