import { formatIssues } from "llm-worker"
import { llmTool, remoteTool, startPlugin, toolsOf, type RemoteCallContext } from "llm-worker/remote/plugin"
import { z } from "zod"

// The decorator form: methods of a class, typed by their schema (a TC39 standard decorator).
class Weather {
  @llmTool({ description: "Weather for a city", parameters: z.object({ city: z.string() }), timeoutSeconds: 10 })
  async get_weather({ city }: { city: string }, { signal }: RemoteCallContext) {
    signal.throwIfAborted()
    if (city === "Atlantis") throw new RangeError(`no forecast for ${city}`)
    return { city, temp_c: 22 }
  }
}

// The function form.
const clock = remoteTool({ name: "clock", description: "The current time (UTC)", execute: () => new Date().toISOString() })

const [weather] = toolsOf(new Weather())
console.log("the host is told:", JSON.stringify(weather!.parameters))
const refused = await weather!.codec.decode({ city: 7 })
if (!refused.ok) console.log("the model would read: InvalidArgument:", formatIssues(refused))

// Nothing listens on port 2: the plugin keeps trying (here three times per tool) until a host answers.
const plugin = await startPlugin({
  source: "plugin:weather",
  tools: [new Weather(), clock],
  host: "http://127.0.0.1:2",
  retry: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 3 },
  shutdown: { signals: false },
  onEvent: (event) => {
    if (event.type !== "registration_failed") return
    const next = event.retryInMs === undefined ? "giving up until the host answers" : "retrying"
    console.log(`${event.tool} attempt ${event.attempt}: ${event.error.split(" (")[0]} - ${next}`)
  }
})
console.log("callbacks at:", `${plugin.callbackOrigin.replace(/\d+$/, "<port>")}/tools/<name>`)
await plugin.ready.catch((error: { _tag: string }) => console.log("ready:", error._tag))
console.log("status:", plugin.status().map((tool) => `${tool.name} ${tool.state}`).join(", "))
await plugin.stop() // what SIGINT / SIGTERM do: unregister (here: nothing was registered), close the server
console.log("stopped")
