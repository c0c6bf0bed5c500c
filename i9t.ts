import { z } from "zod"
import { defineTool } from "./src/index.ts"
for (const p of [z.union([z.object({a: z.string()}), z.object({b: z.number()})]), z.object({ when: z.date() }), z.object({ outer: z.object({ when: z.date() }) })]) {
  try { defineTool({ name: "t", description: "d", parameters: p, execute: () => 1 }) } catch (e) { console.log((e as any)?._tag, (e as any).path, (e as any).tool, String(e)) }
}
