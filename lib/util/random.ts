/**
 * Random identifiers from the Web Crypto API (`globalThis.crypto`), present in every runtime the
 * library supports: Node 20+, browsers, Workers, Deno and Bun. Only `getRandomValues` is relied on:
 * browsers offer `randomUUID` (and `subtle`) in secure contexts only, and a page served over plain
 * HTTP from another host is not one.
 */

/** `count` cryptographically strong random bytes. */
export function randomBytes(count: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(count));
}

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');

/** `count` random bytes as lowercase hex (4 bytes: 8 digits, as random as a UUID's first 8). */
export function randomHex(count: number): string {
  return hex(randomBytes(count));
}

/** A random (version 4) UUID, e.g. `3b241101-e2bb-4255-8caf-4136c566a962`: 122 random bits. */
export function randomUUID(): string {
  const bytes = randomBytes(16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const h = hex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `count` random bytes as unpadded base64url text (16 bytes: 22 characters). */
export function randomToken(count: number): string {
  return btoa(String.fromCharCode(...randomBytes(count)))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}
