/**
 * The plugin process the remote benchmarks load: one small typed tool, registered with the host given as the
 * first argument. Prints `ready <callbackOrigin>` once registered; stops on SIGTERM (its own handler).
 */
import { z } from "zod"
import { remoteTool, startPlugin } from "#internal/remote/plugin/index"

const add = remoteTool({ name: "add", description: "Adds two numbers", parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => ({ sum: a + b }) })
const plugin = await startPlugin({ source: "bench:plugin", tools: [add], host: process.argv[2] as string, healthIntervalMs: 1000 })
await plugin.ready
process.stdout.write(`ready ${plugin.callbackOrigin}\n`)
