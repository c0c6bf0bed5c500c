import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach } from "vitest"
import type { ReplayProvider } from "../../../src/testing/index.ts"
import type { CliProcess } from "../../cli/cli-process.ts"
import { closeAll } from "./host.ts"

/** The line `llm-worker serve` prints when ready: its port and instance id. */
export const READY = /llm-worker host listening on http:\/\/127\.0\.0\.1:(\d+) \(instance ([0-9a-f]+)\)\n/

/**
 * What a test file starts for `serve` tests: its children and replay providers, stopped after each test (the
 * children killed, the providers and the support servers of `host.ts` closed). Call once at the top of a file.
 */
export const serveChildren = (): { readonly children: Array<CliProcess>; readonly replays: Array<ReplayProvider> } => {
  const children: Array<CliProcess> = []
  const replays: Array<ReplayProvider> = []
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill("SIGKILL")
    await Promise.all(replays.splice(0).map((r) => r.close()))
    await closeAll()
  })
  return { children, replays }
}

/** `text` written as `llm-worker.yaml` in a fresh temporary folder; its path. */
export const configFile = (text: string, prefix = "llm-worker-serve-"): string => {
  const path = join(mkdtempSync(join(tmpdir(), prefix)), "llm-worker.yaml")
  writeFileSync(path, text)
  return path
}
