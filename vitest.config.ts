import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"
import { standardDecorators } from "./test/support/standard-decorators.ts"

// A test that imports `llm-worker` by name gets the sources, as the examples do under
// `node --conditions=@llm-worker/source`, not a dist/ that may be stale (decision 0032). Vite replaces its default
// conditions with the ones given, so they are listed after ours.
const SOURCE_CONDITION = "@llm-worker/source"

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  // Without "module": Node loads externalised dependencies itself, and some packages' "module" builds
  // (@opentelemetry/api's) use extensionless imports that only bundlers resolve.
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions.filter((condition) => condition !== "module")] } },
  plugins: [standardDecorators()],
  test: {
    include: ["test/**/*.test.ts"],
    typecheck: { enabled: false },
    testTimeout: 60_000,
    pool: "forks"
  }
})
