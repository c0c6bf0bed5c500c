#!/usr/bin/env node
// The compiled CLI (dist/ is built by `npm run build`, which `prepare` runs on install).
await import("../dist/cli/main.js")
