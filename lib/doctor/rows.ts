/**
 * Rows as probes write them: a probe names a check and says what it saw; the rule, its words,
 * its strength and the library's coping come from the catalogue (checks.ts).
 */
import { checkSpec } from './checks.js';
import { reportable } from './shape.js';
import type { Coping, DoctorRow, DoctorWire, Severity, Verdict } from './types.js';

/** What a probe may say beyond the verdict and what it saw. */
export interface RowExtras {
  /** The server difference the behaviour matches (a `D` id, such as `D6` or `D19`). */
  readonly quirk?: string | undefined;
  /** What the library does, when it differs from the catalogue's words for this check. */
  readonly does?: string | undefined;
  /** A stricter rule the deviation breaks, with its strength (e.g. a -32603 where -32602 is a MUST). */
  readonly rule?: string | undefined;
  readonly severity?: Severity | undefined;
}

/** Collects the rows of one wire. */
export class RowSink {
  readonly rows: DoctorRow[] = [];
  private readonly written = new Set<string>();

  /** `ids`: the task ids a row must not quote ([V4]), read as each row is written. */
  constructor(
    readonly wire: DoctorWire,
    private readonly ids: () => Iterable<string> = () => [],
  ) {}

  /** Writes the row of check `check` (a check is written once; a second write is ignored). */
  add(check: string, verdict: Verdict, seen: string, extras: RowExtras = {}): void {
    if (this.written.has(check)) return;
    this.written.add(check);
    const spec = checkSpec(this.wire, check);
    const lost = verdict === 'deviation' && spec.lost !== undefined;
    const coping: Coping = {
      ...(extras.quirk === undefined ? {} : { quirk: extras.quirk }),
      does: extras.does ?? (lost ? `${spec.copes} ${spec.lost}` : spec.copes),
      handled: !lost,
    };
    this.rows.push({
      check,
      wire: this.wire,
      rule: extras.rule ?? spec.rule,
      quote: spec.quote,
      severity: extras.severity ?? spec.severity,
      // Rows quote what the server sent: never a task id, never a value of unbounded length.
      seen: reportable(seen, this.ids()),
      verdict,
      coping,
    });
  }

  ok(check: string, seen: string, extras?: RowExtras): void {
    this.add(check, 'ok', seen, extras);
  }

  deviation(check: string, seen: string, extras?: RowExtras): void {
    this.add(check, 'deviation', seen, extras);
  }

  untestable(check: string, why: string, extras?: RowExtras): void {
    this.add(check, 'not-testable', why, extras);
  }

  /** True once `check` has its row. */
  has(check: string): boolean {
    return this.written.has(check);
  }

  /** Marks every check of `checks` that has no row yet as not testable, for `why`. */
  rest(checks: readonly string[], why: string): void {
    for (const check of checks) this.untestable(check, why);
  }
}
