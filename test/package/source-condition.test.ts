import { describe, expect, it } from "vitest"

/** Inside vitest, `llm-worker` by name is the sources (vitest.config.ts sets `@llm-worker/source`), never dist/. */
describe("the @llm-worker/source condition in vitest", () => {
  it("resolves every entry point to src/", async () => {
    expect(import.meta.resolve("llm-worker")).toMatch(/\/src\/index\.ts$/)
    expect(import.meta.resolve("llm-worker/testing")).toMatch(/\/src\/testing\/index\.ts$/)
    expect(import.meta.resolve("llm-worker/isolated")).toMatch(/\/src\/isolation\/index\.ts$/)
    const { defineTool } = await import("llm-worker")
    expect(typeof defineTool).toBe("function")
  })
})
