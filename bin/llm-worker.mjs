#!/usr/bin/env node
// The package ships TypeScript sources; tsx compiles them on load, so the command works without a build step.
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
