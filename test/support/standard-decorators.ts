import { transform } from "esbuild"
import type { Plugin } from "vite"

/**
 * Vite 8 compiles TypeScript with oxc, which implements only the legacy (`experimentalDecorators`) form, and
 * Node 20 has no decorators: test files that use TC39 standard decorators (`@llmTool`) are lowered by esbuild —
 * the compiler tsx uses — before oxc sees them. Only files with a decorator at the start of a line are touched.
 */
const DECORATOR = /^\s*@[A-Za-z_$][\w$.]*\s*\(/m

export const standardDecorators = (): Plugin => ({
  name: "llm-worker:standard-decorators",
  enforce: "pre",
  async transform(code, id) {
    if (!id.endsWith(".ts") || id.includes("/node_modules/") || !DECORATOR.test(code)) return undefined
    const out = await transform(code, { loader: "ts", format: "esm", target: "es2022", sourcemap: true, sourcefile: id })
    return { code: out.code, map: out.map }
  }
})
