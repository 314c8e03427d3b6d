/**
 * SHA-256 (FIPS 180-4), synchronous and in plain JavaScript. Task-id fingerprints are computed
 * where no promise can be awaited (inside error messages and log lines), and WebCrypto's digest is
 * asynchronous only; `node:crypto` exists on Node alone. The fingerprint names a task in logs, so it
 * must be the same in every runtime and every process (users compute it themselves to correlate
 * lines): this is the standard hash, checked against `node:crypto` in the tests.
 */

/**
 * Round constants (the first 32 bits of the fractional parts of the cube roots of the first 64
 * primes) and the initial hash (the same of the square roots of the first 8).
 */
const K = new Uint32Array(64);
const H0 = new Uint32Array(8);
for (let candidate = 2, found = 0; found < 64; candidate += 1) {
  let prime = true;
  for (let d = 2; d * d <= candidate; d += 1) if (candidate % d === 0) prime = false;
  if (!prime) continue;
  if (found < 8) H0[found] = (Math.sqrt(candidate) % 1) * 2 ** 32;
  K[found++] = (Math.cbrt(candidate) % 1) * 2 ** 32;
}

/** The eight working variables (the typed array `h`, read as a tuple). */
type State = [number, number, number, number, number, number, number, number];

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/** The SHA-256 digest of `text` (UTF-8), as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  const data = new TextEncoder().encode(text);
  const length = data.length;
  // The message as big-endian words, padded: a 1 bit, zeros, then the length in bits as a 64-bit number.
  const words = new Uint32Array(((length + 72) >>> 6) << 4);
  for (let i = 0; i < length; i += 1) words[i >>> 2]! |= data[i]! << (24 - (i & 3) * 8);
  words[length >>> 2]! |= 0x80 << (24 - (length & 3) * 8);
  words[words.length - 2] = Math.floor(length / 2 ** 29);
  words[words.length - 1] = length << 3;
  const h = H0.slice();
  const w = new Uint32Array(64);
  for (let at = 0; at < words.length; at += 16) {
    let [a, b, c, d, e, f, g, k] = h as unknown as State;
    for (let i = 0; i < 64; i += 1) {
      if (i < 16) w[i] = words[at + i]!;
      else {
        const x = w[i - 15]!;
        const y = w[i - 2]!;
        w[i] =
          w[i - 16]! + (rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3)) + w[i - 7]! + (rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10));
      }
      const t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!;
      const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    [a, b, c, d, e, f, g, k].forEach((v, i) => (h[i]! += v));
  }
  let hex = '';
  for (const word of h) hex += word.toString(16).padStart(8, '0');
  return hex;
}
