import { afterEach, beforeEach } from "vitest"

/**
 * Collects every unhandled rejection raised during each test of the calling file (cleared before each test), so
 * a test can assert that nothing it provoked escaped as one — the failure mode hostile values used to cause.
 */
export const collectUnhandledRejections = (): ReadonlyArray<unknown> => {
  const unhandled: Array<unknown> = []
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason)
  beforeEach(() => {
    unhandled.length = 0
    process.on("unhandledRejection", onUnhandled)
  })
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled)
  })
  return unhandled
}
