import type { Tool as ToolInterface } from "./tool.ts"
import { fromEffect, fromFunction } from "./tool-constructors.ts"

/** The `Tool` interface, and its constructors under the same name: `Tool.fromFunction`, `Tool.fromEffect`. */
export type Tool = ToolInterface
export const Tool = { fromFunction, fromEffect } as const
