/**
 * SDK v2's `Client` class alone, for connect.ts to load with `import()`. A bundler keeps every
 * export of a module loaded with `import()` (esbuild does), so the SDK is named here by a static
 * import of the one class, which it can tree-shake: a page does not ship all of SDK v2 because the
 * library can build a client for it.
 */
export { Client } from '@modelcontextprotocol/client';
