/** Small text formatting helpers shared by the human output. */
import picocolors from 'picocolors';

/** The colour functions the CLI uses (all identity when colours are off). */
export type Colors = ReturnType<typeof picocolors.createColors>;

/** Colours on or off. */
export function colors(enabled: boolean): Colors {
  return picocolors.createColors(enabled);
}

/** `850ms`, `12.3s`, `2m05s`, `1h02m`. */
export function formatElapsed(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3_600)}h${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`;
}

/** A text bar such as `[#####-----]`, `ratio` in [0, 1]. */
export function bar(ratio: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, ratio)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** The first 8 characters of a task id, for display (the full id is a secret). */
export function shortId(taskId: string): string {
  return taskId.length > 12 ? `${taskId.slice(0, 8)}…` : taskId;
}

/** The status, coloured by meaning. */
export function paintStatus(c: Colors, status: string): string {
  switch (status) {
    case 'completed':
      return c.green(status);
    case 'failed':
      return c.red(status);
    case 'cancelled':
      return c.yellow(status);
    case 'input_required':
      return c.magenta(status);
    default:
      return c.cyan(status);
  }
}
