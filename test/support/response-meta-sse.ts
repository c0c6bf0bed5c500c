/**
 * One short text answer ("Hi.") per wire format, written in each provider's stream shape, with the model and
 * response id as parameters: JSON values, so a test can put a number or a huge string where the provider puts
 * its strings.
 */

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`
const named = (name: string, value: unknown): string => `event: ${name}\n${data(value)}`

const chatChunk = (model: unknown, id: unknown, delta: object, finish: string | null) => ({
  id,
  object: "chat.completion.chunk",
  created: 1767225600,
  model,
  system_fingerprint: "fp_7c9a1d2b3e",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
})

export const chatStream = (model: unknown, id: unknown): string =>
  data(chatChunk(model, id, { role: "assistant", content: "", refusal: null }, null)) +
  data(chatChunk(model, id, { content: "Hi." }, null)) +
  data(chatChunk(model, id, {}, "stop")) +
  "data: [DONE]\n\n"

const responseObject = (model: unknown, id: unknown, status: string, output: ReadonlyArray<unknown>) => ({
  id,
  object: "response",
  created_at: 1767225600,
  status,
  error: null,
  incomplete_details: null,
  model,
  output,
  parallel_tool_calls: true,
  ...(status === "completed" ? { usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 } } : { usage: null })
})

export const responsesStream = (model: unknown, id: unknown): string => {
  const item = { id: "msg_0a1b2c", type: "message", status: "in_progress", role: "assistant", content: [] }
  const part = { type: "output_text", annotations: [], text: "Hi." }
  const done = { ...item, status: "completed", content: [part] }
  return (
    named("response.created", { type: "response.created", sequence_number: 0, response: responseObject(model, id, "in_progress", []) }) +
    named("response.in_progress", { type: "response.in_progress", sequence_number: 1, response: responseObject(model, id, "in_progress", []) }) +
    named("response.output_item.added", { type: "response.output_item.added", sequence_number: 2, output_index: 0, item }) +
    named("response.content_part.added", { type: "response.content_part.added", sequence_number: 3, item_id: item.id, output_index: 0, content_index: 0, part: { ...part, text: "" } }) +
    named("response.output_text.delta", { type: "response.output_text.delta", sequence_number: 4, item_id: item.id, output_index: 0, content_index: 0, delta: "Hi." }) +
    named("response.output_text.done", { type: "response.output_text.done", sequence_number: 5, item_id: item.id, output_index: 0, content_index: 0, text: "Hi." }) +
    named("response.content_part.done", { type: "response.content_part.done", sequence_number: 6, item_id: item.id, output_index: 0, content_index: 0, part }) +
    named("response.output_item.done", { type: "response.output_item.done", sequence_number: 7, output_index: 0, item: done }) +
    named("response.completed", { type: "response.completed", sequence_number: 8, response: responseObject(model, id, "completed", [done]) })
  )
}

export const anthropicStream = (model: unknown, id: unknown): string =>
  named("message_start", {
    type: "message_start",
    message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } }
  }) +
  named("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  named("ping", { type: "ping" }) +
  named("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi." } }) +
  named("content_block_stop", { type: "content_block_stop", index: 0 }) +
  named("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }) +
  named("message_stop", { type: "message_stop" })

export const geminiStream = (model: unknown, id: unknown): string =>
  data({
    candidates: [{ content: { parts: [{ text: "Hi" }], role: "model" }, index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 1, totalTokenCount: 10 },
    modelVersion: model,
    responseId: id
  }) +
  data({
    candidates: [{ content: { parts: [{ text: "." }], role: "model" }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 },
    modelVersion: model,
    responseId: id
  })
