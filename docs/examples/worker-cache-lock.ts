import { createLlmClient, Item, PreLlmRequest, Worker, type MutableWorker } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })
})
const answer = (text: string) => sseText([chunk({ content: text }), chunk({}, "stop"), { data: "[DONE]" }])
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: answer("First answer.") },
    { kind: "stream", transcript: answer("Second answer.") },
    { kind: "stream", transcript: answer("Never finished."), stallAfterEvents: 1 }, // goes silent after one event
    { kind: "stream", transcript: answer("Third answer.") }
  ]
})
const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl })
const mutable = Worker.create({ client, systemPrompt: "You are terse.", history: [Item.userText("Context: a long document…")] })

// lock() freezes system prompt, tools, config and history prefix, and returns the worker to use from now on.
const worker = mutable.lock()
console.log("state:", worker.state, "| locked items:", worker.lockedPrefix.historyLength, "| locked bytes:", worker.lockedPrefix.prefixBytes)
try {
  mutable.history() // the old object is retired
} catch (error) {
  console.log("old object:", (error as { _tag: string })._tag)
}
try {
  ;(worker as unknown as MutableWorker).setSystemPrompt("changed") // does not compile without the cast
} catch (error) {
  console.log("locked:", (error as { _tag: string })._tag)
}

for (const prompt of ["Question one", "Question two"]) {
  const { cache } = await worker.run(prompt)
  const report = cache[0]
  console.log(`request ${report?.requestBytes} bytes, ${report?.unchangedPrefixBytes} repeated from the previous, locked prefix intact: ${report?.locked?.intact}`)
}

// A hook that rewrites the locked part of the request is caught before anything is sent.
const remove = worker.addHook("PreLlmRequest", ({ context }) => PreLlmRequest.rewrite({ ...context, systemPrompt: "Be verbose." }))
await worker.run("Question three").catch((error: { _tag: string; kind: string }) => console.log("violation:", error._tag, error.kind))
remove()

// Cancellation: cancel() stops the run in progress wherever it is; nothing of the half response is kept.
const unsubscribe = worker.subscribe({ onText: () => worker.cancel() })
const before = worker.history().length
await worker.run("Question four").catch((error: { _tag: string }) => console.log("cancelled run:", error._tag))
console.log("history grew by:", worker.history().length - before, "(the prompt only)")
unsubscribe()
worker.cancel() // while idle: a no-op that cannot reach the next run
const after = await worker.unlock().run("Question five").catch((error: { _tag: string }) => error._tag)
console.log("next run:", typeof after === "string" ? after : after.status)
console.log("requests sent:", replay.requests.length)
await replay.close()
