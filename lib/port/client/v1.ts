/**
 * SDK v1's `Client` class alone, for connect.ts to load with `import()` (see ./v2.ts: a static
 * import of the one class, which a bundler can tree-shake).
 */
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
