// The task function of the isolation pool: it runs inside a worker thread, loads the tool's handler module and
// calls the named export with the decoded arguments. Plain JavaScript on purpose: a worker thread starts without
// the TypeScript loader the repository's tests and scripts use, and this file must load there as it is (the
// build copies it to dist/ unchanged). It replies with plain strings only, so nothing it sends can fail to clone.

/** Bound, in UTF-16 code units, of an error description sent back (the main thread caps it again). */
const MAX_DESCRIBED = 102_400

const read = (value, key) => {
  try {
    return value[key]
  } catch {
    return undefined
  }
}

/** Never throws: a handler in this thread may throw anything, exactly as in the main thread. */
const describe = (thrown) => {
  try {
    let text
    if (typeof thrown === "string") text = thrown
    else if (typeof thrown === "symbol") text = String(thrown)
    else if (typeof thrown !== "object" && typeof thrown !== "function") text = String(thrown)
    else if (thrown === null) text = "null"
    else {
      const message = read(thrown, "message")
      if (typeof message === "string" && message !== "") text = message
      else {
        try {
          text = JSON.stringify(thrown)
        } catch {
          text = undefined
        }
        if (typeof text !== "string") text = "a thrown value that cannot be described"
      }
    }
    return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}… (${text.length - MAX_DESCRIBED} more characters)` : text
  } catch {
    return "a thrown value that cannot be described"
  }
}

const isToolFailure = (value) =>
  typeof value === "object" && value !== null && read(value, "_tag") === "ToolFailure" && typeof read(value, "message") === "string"

/** The output rule of `defineTool`: strings as they are, `toolFailure(…)` fails, anything else as JSON. */
const render = (value) => {
  if (typeof value === "string") return { ok: true, output: value }
  if (isToolFailure(value)) return { ok: false, message: read(value, "message") }
  try {
    return { ok: true, output: JSON.stringify(value) ?? "null" }
  } catch (thrown) {
    return { ok: false, message: `tool output is not JSON-serialisable: ${describe(thrown)}` }
  }
}

/** @param {{ module: string, exportName: string, args: unknown, callId: string }} task */
export default async function runIsolatedHandler(task) {
  let handler
  try {
    const loaded = await import(task.module)
    handler = loaded[task.exportName]
  } catch (thrown) {
    return { ok: false, message: `cannot load the tool's module ${task.module}: ${describe(thrown)}` }
  }
  if (typeof handler !== "function") {
    return { ok: false, message: `the tool's module ${task.module} has no function export "${task.exportName}"` }
  }
  try {
    return render(await handler(task.args, { callId: task.callId }))
  } catch (thrown) {
    return { ok: false, message: describe(thrown) }
  }
}
