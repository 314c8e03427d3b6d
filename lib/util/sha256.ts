/**
 * SHA-256 (FIPS 180-4), synchronous and in plain JavaScript. Task-id fingerprints are computed
 * where no promise can be awaited (inside error messages and log lines), and WebCrypto's digest is
 * asynchronous only; `node:crypto` exists on Node alone. The fingerprint names a task in logs, so it
 * must be the same in every runtime and every process (users compute it themselves to correlate
 * lines): this is the standard hash, checked against `node:crypto` in the tests.
 */

/** The first 32 bits of the fractional parts of `root` of the first `count` primes. */
function fractions(count: number, root: (x: number) => number): Uint32Array {
  const out = new Uint32Array(count);
  for (let candidate = 2, found = 0; found < count; candidate += 1) {
    let prime = true;
    for (let d = 2; d * d <= candidate; d += 1) if (candidate % d === 0) prime = false;
    if (prime) out[found++] = ((root(candidate) % 1) * 2 ** 32) >>> 0;
  }
  return out;
}

/** Round constants (cube roots of the first 64 primes) and the initial hash (square roots of the first 8). */
const K = fractions(64, Math.cbrt);
const H0 = fractions(8, Math.sqrt);

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/** The SHA-256 digest of `data` (32 bytes). */
export function sha256(data: Uint8Array): Uint8Array {
  // Padding: a 1 bit, zeros, then the length in bits as a 64-bit big-endian number.
  const blocks = new Uint8Array(((data.length + 9 + 63) >>> 6) << 6);
  blocks.set(data);
  blocks[data.length] = 0x80;
  const view = new DataView(blocks.buffer);
  view.setUint32(blocks.length - 8, Math.floor(data.length / 2 ** 29));
  view.setUint32(blocks.length - 4, (data.length << 3) >>> 0);
  const h = H0.slice();
  const w = new Uint32Array(64);
  for (let at = 0; at < blocks.length; at += 64) {
    for (let i = 0; i < 16; i += 1) w[i] = view.getUint32(at + i * 4);
    for (let i = 16; i < 64; i += 1) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      w[i] = w[i - 16]! + (rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)) + w[i - 7]! + (rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10));
    }
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    let f = h[5]!;
    let g = h[6]!;
    let k = h[7]!;
    for (let i = 0; i < 64; i += 1) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0]! += a;
    h[1]! += b;
    h[2]! += c;
    h[3]! += d;
    h[4]! += e;
    h[5]! += f;
    h[6]! += g;
    h[7]! += k;
  }
  const out = new Uint8Array(32);
  const digest = new DataView(out.buffer);
  for (let i = 0; i < 8; i += 1) digest.setUint32(i * 4, h[i]!);
  return out;
}

/** The SHA-256 digest of `text` (UTF-8), as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  let hex = '';
  for (const byte of sha256(new TextEncoder().encode(text))) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
