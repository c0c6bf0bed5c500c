/**
 * SSE frames in each provider's genuine wire shape, built from a neutral description of one answer (text deltas,
 * tool calls, keep-alives). The shapes follow test/fixtures/sse/<scheme>/*.sse and the decoders under
 * src/llm/schemes; ids and texts are made up here, nothing is copied from recordings. Frames are produced lazily
 * (generators) so a 64 MiB answer is never held whole by the server that sends it.
 */

export type HostileScheme = "openai-chat" | "openai-responses" | "anthropic" | "gemini"

export const ALL_SCHEMES: ReadonlyArray<HostileScheme> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

/** The built-in provider that speaks each scheme; the client is pointed at the server with its base-URL variable. */
export const PROVIDER_OF: Readonly<Record<HostileScheme, { readonly provider: string; readonly baseUrlEnv: string; readonly keyEnv: string }>> = {
  "openai-chat": { provider: "openai", baseUrlEnv: "OPENAI_BASE_URL", keyEnv: "OPENAI_API_KEY" },
  "openai-responses": { provider: "openai-responses", baseUrlEnv: "OPENAI_BASE_URL", keyEnv: "OPENAI_API_KEY" },
  anthropic: { provider: "anthropic", baseUrlEnv: "ANTHROPIC_BASE_URL", keyEnv: "ANTHROPIC_API_KEY" },
  gemini: { provider: "gemini", baseUrlEnv: "GEMINI_BASE_URL", keyEnv: "GEMINI_API_KEY" }
}

/** One tool call as the hostile model emits it. */
export interface WireCall {
  /** The provider's call id; `undefined` leaves the id out of the wire entirely (a server that sends none). */
  readonly id?: string
  readonly name: string
  /**
   * The argument JSON text, whole or in streamed pieces. Gemini sends arguments as one JSON object (`args`), so
   * for Gemini the pieces are joined and must form one JSON object text.
   */
  readonly args: string | Iterable<string>
}

export interface WireAnswer {
  /**
   * Reasoning deltas before the text (each one SSE event): Anthropic `thinking_delta`s, or the
   * `reasoning_content` of compatible Chat servers. Not produced for Responses and Gemini.
   */
  readonly thinking?: Iterable<string>
  /** Text deltas, in order (each one SSE event). */
  readonly text?: Iterable<string>
  readonly calls?: ReadonlyArray<WireCall>
  /** Keep-alive frames sent after the start of the response and before any content. */
  readonly keepAlivesBeforeContent?: number
  /** Leave out the provider's terminal event(s) (a stream that just stops). */
  readonly omitTerminal?: boolean
}

const frame = (data: string, event?: string): string => `${event === undefined ? "" : `event: ${event}\n`}data: ${data}\n\n`
const json = JSON.stringify

const pieces = (args: string | Iterable<string>): Iterable<string> => (typeof args === "string" ? [args] : args)
const whole = (args: string | Iterable<string>): string => (typeof args === "string" ? args : [...args].join(""))

/** OpenAI Chat Completions chunks (`chat.completion.chunk`), as in openai-chat/*.sse; compatible servers keep
 * idle connections alive with SSE comments. */
function* openAiChat(answer: WireAnswer): Generator<string> {
  const head = { id: "chatcmpl-h0st1leAnsw3r", object: "chat.completion.chunk", created: 1767225600, model: "gpt-4.1-mini-2025-04-14" }
  const chunk = (delta: object, finish: string | null = null): string =>
    frame(json({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null }))
  yield chunk({ role: "assistant", content: "", refusal: null })
  for (let i = 0; i < (answer.keepAlivesBeforeContent ?? 0); i++) yield ": keep-alive\n\n"
  for (const reasoning_content of answer.thinking ?? []) yield chunk({ reasoning_content })
  for (const text of answer.text ?? []) yield chunk({ content: text })
  const calls = answer.calls ?? []
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index] as WireCall
    const start = { index, ...(call.id === undefined ? {} : { id: call.id }), type: "function", function: { name: call.name, arguments: "" } }
    yield chunk({ tool_calls: [start] })
    for (const piece of pieces(call.args)) yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] })
  }
  if (answer.omitTerminal === true) return
  yield chunk({}, calls.length > 0 ? "tool_calls" : "stop")
  yield frame(
    json({
      ...head,
      choices: [],
      usage: { prompt_tokens: 19, completion_tokens: 8, total_tokens: 27, prompt_tokens_details: { cached_tokens: 0 } }
    })
  )
  yield frame("[DONE]")
}

/** OpenAI Responses events (`response.*`), as in openai-responses/*.sse. */
function* openAiResponses(answer: WireAnswer): Generator<string> {
  let seq = 0
  const responseId = "resp_h0st1le0000000000000000000000"
  const response = (status: string, output: ReadonlyArray<object>, usage: object | null) => ({
    id: responseId,
    object: "response",
    created_at: 1767225600,
    status,
    error: null,
    incomplete_details: null,
    model: "gpt-4.1-mini-2025-04-14",
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage
  })
  const event = (type: string, body: object): string => frame(json({ type, ...body, sequence_number: seq++ }), type)
  yield event("response.created", { response: response("in_progress", [], null) })
  yield event("response.in_progress", { response: response("in_progress", [], null) })
  // Responses has no keep-alive event of its own; idle proxies in front of it send SSE comments.
  for (let i = 0; i < (answer.keepAlivesBeforeContent ?? 0); i++) yield ": keep-alive\n\n"
  const output: Array<object> = []
  let outputIndex = 0
  const texts = answer.text === undefined ? [] : [...answer.text]
  if (texts.length > 0) {
    const item_id = "msg_h0st1le000000000000000000000000"
    const output_index = outputIndex++
    yield event("response.output_item.added", { output_index, item: { id: item_id, type: "message", status: "in_progress", content: [], role: "assistant" } })
    yield event("response.content_part.added", { item_id, output_index, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text: "" } })
    for (const delta of texts) yield event("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] })
    const text = texts.join("")
    yield event("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] })
    const part = { type: "output_text", annotations: [], logprobs: [], text }
    yield event("response.content_part.done", { item_id, output_index, content_index: 0, part })
    const item = { id: item_id, type: "message", status: "completed", content: [part], role: "assistant" }
    output.push(item)
    yield event("response.output_item.done", { output_index, item })
  }
  for (const [n, call] of (answer.calls ?? []).entries()) {
    const item_id = `fc_h0st1le${String(n).padStart(24, "0")}`
    const output_index = outputIndex++
    const ids = call.id === undefined ? {} : { call_id: call.id }
    yield event("response.output_item.added", {
      output_index,
      item: { id: call.id === undefined ? undefined : item_id, type: "function_call", status: "in_progress", arguments: "", ...ids, name: call.name }
    })
    let streamed = ""
    for (const delta of pieces(call.args)) {
      streamed += delta
      yield event("response.function_call_arguments.delta", { item_id, output_index, delta })
    }
    yield event("response.function_call_arguments.done", { item_id, output_index, arguments: streamed })
    const item = { id: call.id === undefined ? undefined : item_id, type: "function_call", status: "completed", arguments: streamed, ...ids, name: call.name }
    output.push(item)
    yield event("response.output_item.done", { output_index, item })
  }
  if (answer.omitTerminal === true) return
  yield event("response.completed", {
    response: response("completed", output, {
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 16,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 28
    })
  })
}

/** Anthropic Messages events, as in anthropic/*.sse (including its `ping` keep-alive event). */
function* anthropic(answer: WireAnswer): Generator<string> {
  const event = (type: string, body: object): string => frame(json({ type, ...body }), type)
  yield event("message_start", {
    message: {
      model: "claude-sonnet-4-5-20250929",
      id: "msg_01H0st1leAnsw3r000000000",
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: "standard" }
    }
  })
  for (let i = 0; i < (answer.keepAlivesBeforeContent ?? 0); i++) yield PING
  let index = 0
  if (answer.thinking !== undefined) {
    yield event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } })
    for (const thinking of answer.thinking) yield event("content_block_delta", { index, delta: { type: "thinking_delta", thinking } })
    yield event("content_block_delta", { index, delta: { type: "signature_delta", signature: "SGFyZGVuaW5nVGVzdFNpZ25hdHVyZQ==" } })
    yield event("content_block_stop", { index: index++ })
  }
  const texts = answer.text
  if (texts !== undefined) {
    let opened = false
    for (const text of texts) {
      if (!opened) {
        yield event("content_block_start", { index, content_block: { type: "text", text: "" } })
        opened = true
      }
      yield event("content_block_delta", { index, delta: { type: "text_delta", text } })
    }
    if (opened) yield event("content_block_stop", { index: index++ })
  }
  const calls = answer.calls ?? []
  for (const call of calls) {
    // Anthropic always sends an id; a missing one is the decoder's protocol error, so it is sent as given.
    yield event("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } })
    yield event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } })
    for (const partial_json of pieces(call.args)) yield event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })
    yield event("content_block_stop", { index: index++ })
  }
  if (answer.omitTerminal === true) return
  yield event("message_delta", { delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } })
  yield event("message_stop", {})
}

/** Anthropic's keep-alive event, exactly as it appears between real events. */
export const PING = frame(json({ type: "ping" }), "ping")

/** Gemini `streamGenerateContent?alt=sse` chunks, as in gemini/*.sse. */
function* gemini(answer: WireAnswer): Generator<string> {
  const tail = `,"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 2,"totalTokenCount": 10},"modelVersion": "gemini-2.5-flash","responseId": "h0st1leRespId0000000"}`
  const chunk = (parts: string, finish?: string): string =>
    `data: {"candidates": [{"content": {"parts": [${parts}],"role": "model"}${finish === undefined ? "" : `,"finishReason": "${finish}"`},"index": 0}]${tail}\n\n`
  // Gemini has no keep-alive event; proxies in front of it send SSE comments.
  for (let i = 0; i < (answer.keepAlivesBeforeContent ?? 0); i++) yield ": keep-alive\n\n"
  for (const text of answer.text ?? []) yield chunk(json({ text }))
  const calls = answer.calls ?? []
  if (calls.length > 0) {
    // Arguments are spliced in as text (not re-serialised) so hostile nesting reaches the client as the model sent it.
    const parts = calls.map((call) => `{"functionCall": {${call.id === undefined ? "" : `"id": ${json(call.id)},`}"name": ${json(call.name)},"args": ${whole(call.args)}}}`)
    yield chunk(parts.join(","))
  }
  if (answer.omitTerminal === true) return
  yield chunk(json({ text: "" }), "STOP")
}

/** The SSE frames of one answer in `scheme`'s wire format, produced lazily. */
export const answerFrames = (scheme: HostileScheme, answer: WireAnswer): Iterable<string> => {
  switch (scheme) {
    case "openai-chat":
      return openAiChat(answer)
    case "openai-responses":
      return openAiResponses(answer)
    case "anthropic":
      return anthropic(answer)
    case "gemini":
      return gemini(answer)
  }
}
