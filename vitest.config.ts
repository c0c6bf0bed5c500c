import { defineConfig } from "vitest/config"
import { standardDecorators } from "./test/support/standard-decorators.ts"

export default defineConfig({
  plugins: [standardDecorators()],
  test: {
    include: ["test/**/*.test.ts"],
    typecheck: { enabled: false },
    testTimeout: 60_000,
    pool: "forks"
  }
})
