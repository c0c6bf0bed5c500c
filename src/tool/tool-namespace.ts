import type { Tool as ToolInterface } from "./tool.ts"
import { fromEffect, fromFunction } from "./tool-constructors.ts"

/** The `Tool` interface, and its constructors under the same name: `Tool.fromFunction`, `Tool.fromEffect`. */
export type Tool = ToolInterface
/**
 * Low-level tool constructors, for handlers that take the raw JSON argument text: `Tool.fromFunction` (Promise)
 * and `Tool.fromEffect` (Effect). Most tools are better declared with `defineTool`.
 */
export const Tool = {
  /** A tool from a plain (async) function over the raw JSON argument text. */
  fromFunction,
  /** A tool from a function over the raw JSON argument text that returns an Effect. */
  fromEffect
} as const
