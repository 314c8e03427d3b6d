/** The JSON-RPC error a thrown value chooses, read without trusting it. */

/**
 * The `code` and `data` a thrown value carries for a JSON-RPC error: both only when `code` is an
 * integer and the value is no `DOMException` (an `AbortError`'s 20, a `TimeoutError`'s 23 are
 * legacy DOM numbers, never JSON-RPC codes); none otherwise. Never throws: a getter or proxy trap
 * that throws gives none.
 */
export function rpcFieldsOf(thrown: unknown): { readonly code?: number; readonly data?: unknown } {
  try {
    const e = thrown as { code?: unknown; data?: unknown } | null | undefined;
    const code = e?.code;
    if (Number.isInteger(code) && !(thrown instanceof DOMException)) return { code: code as number, data: e?.data };
  } catch {
    // A getter or trap that throws: no code of its own.
  }
  return {};
}

/** JSON-RPC's internal error: the code of a thrown value that carries none of its own. */
export const INTERNAL_ERROR = -32603;

/**
 * The JSON-RPC error code a request of the peer's is answered with when its handler throws
 * `thrown`: its own integer code ({@link rpcFieldsOf}), else -32603. The port's answer to a tap
 * that rejects (port/inbound.ts) and the 2025-11-25 input tap, which wraps an error without a code
 * (wire/v2025/input.ts), choose the same.
 */
export function answerCodeOf(thrown: unknown): number {
  return rpcFieldsOf(thrown).code ?? INTERNAL_ERROR;
}
