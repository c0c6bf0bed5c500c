import { z } from "zod"

/**
 * The request bodies of the host's API. These schemas validate every request and are the source of
 * `GET /openapi.json`, so the document cannot drift from what the host accepts. Objects are closed: an unknown
 * key is a 422 naming it.
 */

const roleField = z.string().max(64, "a role name is at most 64 characters").nullable().optional().describe("A role name; null, absent or \"\" means every role")

export const RegisterBody = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, "a tool name is 1-64 characters of [A-Za-z0-9_.-]")
      .describe("Tool name shown to the model"),
    description: z.string().max(16 * 1024).nullable().optional().describe("What the tool does, for the model"),
    parameters: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe("JSON Schema of the arguments (an object schema); no arguments when absent. Linted against every provider"),
    callback_url: z.string().min(1).max(2048).describe("Loopback URL the host POSTs calls to"),
    role: roleField,
    source: z.string().min(1).max(128).regex(/^[^\p{C}]+$/u, "a source must not contain control characters").nullable().optional().describe("Owner tag; \"external\" when absent"),
    timeout_seconds: z.number().gt(0).lte(300).nullable().optional().describe("Total deadline per call, in (0, 300]; 30 when absent")
  })
  .describe("POST /api/tools/register")

export const UnregisterBody = z.strictObject({
  name: z.string().min(1).max(64),
  role: roleField
})

export const ClearBody = z.strictObject({
  role: roleField,
  source: z.string({ error: "source is required" }).min(1, "source must be at least 1 character").max(128)
})

export const ClaimBody = z
  .strictObject({
    source: z.string({ error: "source is required" }).min(1, "source must be at least 1 character").max(128).regex(/^[^\p{C}]+$/u, "a source must not contain control characters")
  })
  .describe("POST /api/sources/claim")

export const ChatBody = z.strictObject({
  role: roleField.describe("The role to talk to; the default role when null or absent"),
  message: z.string().min(1, "message must not be empty").max(1024 * 1024)
})

const Issue = z.object({ path: z.string(), message: z.string() })
const FailedRole = z.object({ role: z.string(), error: z.string() })
const Instance = { instance_id: z.string().describe("New on every host start; also in the x-llm-worker-instance header") }

export const ErrorResponse = z.object({
  ok: z.literal(false),
  error: z.string(),
  issues: z.array(Issue).optional(),
  code: z.literal("source_claimed").optional().describe("409: the source is claimed by a registrant token other than the one presented (or none was)"),
  ...Instance
})

const RoleChanges = {
  affected_roles: z.array(z.string()).describe("Roles where the change is in effect now"),
  pending_roles: z.array(z.string()).describe("Roles where it applies at the next turn boundary (busy or cache-locked)"),
  failed_roles: z.array(FailedRole)
}

export const RegisterResponse = z.object({
  ok: z.boolean(),
  registered: z.string(),
  ...RoleChanges,
  callback_secret: z.string().optional().describe("HMAC key of this registration's callback signatures"),
  registrant_token: z.string().optional().describe("Issued once, on a token-less first registration of a source (a registration presenting a token of its own claims the source with it instead)"),
  source: z.string().optional(),
  owner: z.enum(["claimed", "unclaimed"]).optional().describe("Whether the source is now claimed by a registrant token"),
  ...Instance
})

export const UnregisterResponse = z.object({ ok: z.boolean(), unregistered: z.string(), ...RoleChanges, ...Instance })
export const ClaimResponse = z.object({ ok: z.literal(true), source: z.string(), owner: z.literal("claimed"), ...Instance })

export const ClearResponse = z.object({ ok: z.boolean(), cleared: z.array(z.string()), source: z.string(), ...RoleChanges, ...Instance })

const ListedTool = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  source: z.string(),
  timeout_seconds: z.number().nullable(),
  callback_host: z.string().nullable(),
  state: z.enum(["active", "pending"]),
  calls: z.number().optional(),
  errors: z.number().optional(),
  last_error: z.string().nullable().optional()
})

export const ListResponse = z.object({ ok: z.literal(true), roles: z.record(z.string(), z.array(ListedTool)), evictions: z.array(z.record(z.string(), z.unknown())), ...Instance })
export const HealthResponse = z.object({
  ok: z.literal(true),
  roles: z.array(z.string()),
  /** Roles whose chat answers 503 (no provider, model or key): their tools still register. Empty when every role can chat. */
  roles_without_model: z.array(z.object({ role: z.string(), problem: z.string() })),
  ...Instance
})

export const ChatResponse = z.object({
  ok: z.literal(true),
  role: z.string(),
  text: z.string(),
  tool_calls: z.array(z.object({ name: z.string(), call_id: z.string(), status: z.string(), output: z.string() })),
  usage: z.record(z.string(), z.number()),
  ...Instance
})

/*
 * The plugin-LLM lane (src/plugin-llm, mounted by the host). The host checks the shape of each field here (wrong
 * type or unknown field: 422 with `issues`, like every other route); what a value means — an empty message list,
 * an image that is not one, a refused override — is answered by the lane with its typed error (`error_type`).
 */

const routing = {
  provider: z.string().min(1).max(200).optional().describe("Gated: plugins.entries.<id>.llm.allow_provider_override / allowed_providers"),
  model: z.string().min(1).max(200).optional().describe("Gated: allow_model_override / allowed_models"),
  agent_id: z.string().min(1).max(64).optional().describe("Another role of the host (gated: allow_agent_id_override)"),
  profile: z.string().min(1).max(200).optional().describe("A stored credential profile, llm.profiles.<name> (gated: allow_profile_override)"),
  task: z.string().min(1).max(200).optional().describe("An auxiliary task: the plugin's own, or a built-in one with allow_task_override"),
  temperature: z.number().min(0).optional(),
  max_tokens: z.int().min(1).optional(),
  timeout: z.number().gt(0).optional().describe("Seconds; over auxiliary.<task>.timeout and llm.timeout"),
  purpose: z.string().max(1000).optional().describe("Free text for the audit line")
}

const Record_ = z.record(z.string(), z.unknown())

export const CompleteBody = z
  .strictObject({
    ...routing,
    messages: z.array(Record_).describe("OpenAI-shaped messages: {role, content}; content is text or text / image_url parts")
  })
  .describe("POST /api/llm/complete")

export const CompleteStructuredBody = z
  .strictObject({
    ...routing,
    instructions: z.string().describe("What to do with the input"),
    input: z.array(Record_).describe('Blocks: {type: "text", text} or {type: "image", data: <base64>, mime_type?} or {type: "image", url}'),
    json_schema: Record_.optional().describe("JSON Schema of the answer (object root); the answer is validated against it"),
    json_mode: z.boolean().optional().describe("Ask for JSON without a schema"),
    schema_name: z.string().max(200).optional(),
    system_prompt: z.string().optional(),
    repair: z.boolean().optional().describe("On a parse or validation failure, ask once more with the issues")
  })
  .describe("POST /api/llm/complete-structured")

export const CommandBody = z.strictObject({ args: z.string().max(1024 * 1024).describe("The text after /<name>") }).describe("POST /api/commands/<name>")

const LaneUsage = z.record(z.string(), z.union([z.number(), z.string()])).describe("input_tokens, output_tokens, total_tokens, cache and reasoning tokens, cost_usd and cost_source when known")

export const CompleteResponse = z.object({
  ok: z.literal(true),
  text: z.string(),
  provider: z.string().describe("The provider that answered (after vision routing and fallback)"),
  model: z.string().describe("The model that answered, as the provider named it for this call (the route's model id when it named none)"),
  requested_model: z.string().describe("The model id the call was routed to (after vision routing and fallback)"),
  agent_id: z.string(),
  usage: LaneUsage,
  audit: z.record(z.string(), z.unknown()).describe("The call's audit record, the same as the host's audit line"),
  ...Instance
})

export const CompleteStructuredResponse = CompleteResponse.extend({
  parsed: z.unknown().describe("The validated value when content_type is json; null otherwise"),
  content_type: z.enum(["json", "text"]),
  issues: z.array(z.record(z.string(), z.unknown())).optional().describe("Why the answer was refused, when it was; the raw answer is in text")
})

export const LaneErrorResponse = ErrorResponse.extend({
  error_type: z
    .string()
    .optional()
    .describe("PluginLlmTrustError, PluginLlmInputError, PluginLlmSchemaError, PluginLlmTimeoutError, PluginLlmRateLimited, PluginLlmProviderUnavailable, PluginLlmCancelled, PluginLlmBudgetExceeded"),
  override: z.string().optional(),
  config_key: z.string().optional().describe("The config key that would allow a refused override"),
  plugin_id: z.string().optional(),
  hops: z.array(z.record(z.string(), z.unknown())).optional()
})

export const CommandResponse = z.object({ ok: z.literal(true), output: z.string(), ...Instance })
export const CommandListResponse = z.object({
  ok: z.literal(true),
  commands: z.array(z.object({ name: z.string(), plugin: z.string(), description: z.string(), args_hint: z.string() })),
  ...Instance
})
