import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    typecheck: { enabled: false },
    testTimeout: 60_000,
    pool: "forks"
  }
})
