import { z } from "zod"
import { completeObject, createLlmClient, Worker } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

const Tasks = z.object({
  tasks: z.array(z.object({ owner: z.string().optional(), action: z.string() }))
})

// A Chat Completions stream answering with JSON, replayed by a local server (no network, no key needed).
// OpenAI is sent the strict dialect, so the model writes null for an owner it leaves out.
const answer = (text: string) =>
  sseText([
    { data: JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: "stop" }] }) },
    { data: JSON.stringify({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 22, total_tokens: 62 } }) },
    { data: "[DONE]" }
  ])
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: answer('{"tasks":[{"owner":"Ana","action":"ship the release"},{"owner":null,"action":"book the room"}]}') },
    { kind: "stream", transcript: answer('{"tasks":[{"owner":"Ana"}]}') },
    { kind: "stream", transcript: answer('{"tasks":[]}') }
  ]
})
const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl })

const notes = "Ana ships the release on Friday. Someone books the room."
const result = await completeObject(client, { input: notes, schema: Tasks, name: "meeting.tasks", systemPrompt: "Extract action items." })
const sent = JSON.parse(replay.requests[0]?.body ?? "{}") as { response_format: { json_schema: { name: string; strict: boolean } } }
console.log("sent:", sent.response_format.json_schema.name, "strict:", sent.response_format.json_schema.strict)
if (result.output.ok) {
  // Typed from the schema: { tasks: { owner?: string; action: string }[] }
  for (const task of result.output.value.tasks) console.log(`- [${task.owner ?? "?"}] ${task.action}`)
}
console.log("usage:", JSON.stringify(result.usage))

// An answer that breaks the schema is not an exception: the text, the issues and the usage are kept.
const refused = await completeObject(client, { input: notes, schema: Tasks })
if (!refused.output.ok) {
  console.log("refused:", refused.output.stage, JSON.stringify(refused.output.issues), "text:", refused.text)
}

// A Worker run can end in the same typed output; tools stay callable on the way.
const worker = Worker.create({ client })
const run = await worker.run(notes, { output: Tasks })
console.log("run:", run.status, JSON.stringify(run.output))
await replay.close()
