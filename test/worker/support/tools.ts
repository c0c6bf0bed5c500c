import type { ToolDefinition } from "../../../src/tool/tool.ts"
import { fromFunction } from "../../../src/tool/tool-constructors.ts"
import { InvalidArgument } from "../../../src/tool/tool-error.ts"
import { ToolMeta } from "../../../src/tool/tool-meta.ts"

/** A tool echoing its arguments, counting its calls on the instance (so hooks can read its state). */
export class EchoTool {
  calls: Array<string> = []
  async execute(args: string): Promise<string> {
    this.calls.push(args)
    return `echo:${args}`
  }
}

export const echoDefinition = (name = "echo", tool = new EchoTool()): ToolDefinition => () => [
  ToolMeta.make(name).description("echo").inputSchema({ type: "object", properties: { v: { type: "string" } } }),
  tool
]

/** A tool that needs `{ "n": number }` and says precisely what is wrong otherwise. */
export const strictNumberDefinition: ToolDefinition = () => [
  ToolMeta.make("square").inputSchema({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
  fromFunction((args) => {
    const value = (JSON.parse(args) as { n?: unknown }).n
    if (typeof value !== "number") throw new InvalidArgument({ message: "n: expected a number" })
    return String(value * value)
  })
]

/** A tool that waits `ms`, honouring its signal unless told to ignore it. */
export const slowDefinition = (name: string, ms: number, ignoreSignal = false, log?: Array<string>): ToolDefinition => () => [
  ToolMeta.make(name),
  {
    execute: (_args, context) =>
      new Promise<string>((resolve, reject) => {
        log?.push(`start:${name}`)
        const timer = setTimeout(() => {
          log?.push(`end:${name}`)
          resolve(`${name} done`)
        }, ms)
        if (!ignoreSignal) {
          context.signal.addEventListener("abort", () => {
            clearTimeout(timer)
            reject(new Error("aborted"))
          }, { once: true })
        }
      })
  }
]
