#!/usr/bin/env node
// The `mcp-task` command: runs the compiled CLI. The package's build (`npm run build`, which
// `npm install` runs in a clone of the repository) compiles cli/src/ and the example server it
// embeds (examples/server.ts) into dist/, keeping their relative layout.
import '../dist/cli/src/main.js';
