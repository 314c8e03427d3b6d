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

/** A JSON-RPC error to throw or reject with, for the SDK to send back: an `Error` with its `code`. */
export function rpcThrowable(code: number, message: string): Error & { readonly code: number } {
  return Object.assign(new Error(message), { code });
}

/** A JSON-RPC error object: `code` and `message`, and `data` only when there is some. */
export function rpcError(
  code: number,
  message: string,
  data: unknown,
): { code: number; message: string; data?: unknown } {
  return data === undefined ? { code, message } : { code, message, data };
}

/**
 * The integer `code` of a JSON-RPC error object a peer sent: an integer, or one written as a
 * numeric string (writers that quote every value); `undefined` for anything else.
 */
export function wireCode(value: unknown): number | undefined {
  const code = typeof value === 'string' && /^\s*-?\d{1,15}\s*$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(code) ? (code as number) : undefined;
}
