import { geminiSubsetToolsFragment, toolNames, type ToolNameMap, toolsFragment } from "../../schema/provider-tools.ts"
import { hostedToolEntries, withHostedTools } from "../hosted-tools.ts"
import type { EnvelopeCache } from "../envelope-cache.ts"
import { type JsonBodyValue, jsonBody, rawJson } from "../json-body.ts"
import type { Request } from "../request.ts"
import type { ConfigWarning } from "../scheme.ts"
import { type GeminiEndpointFeatures, type GeminiSettings, resolveGeminiSettings } from "./gemini-config.ts"
import { cachedGeminiContents, type GeminiFragments, type GeminiSnapshots, geminiContents } from "./gemini-contents.ts"
import { foreignOutputWarnings } from "./foreign-output.ts"
import { geminiResponseFields } from "./response-format.ts"

/**
 * How tool schemas are sent: `parametersJsonSchema` (JSON Schema, current endpoints) or the OpenAPI-subset
 * `parameters` that older endpoints require (lossy: `lintToolSpec(spec, { targets: ["gemini-subset"] })` says what
 * each schema loses).
 */
export type GeminiToolSchemas = "json-schema" | "openapi-subset"

/**
 * The `streamGenerateContent` body, and every warning about what it had to leave out. With `encoding` (what
 * `encodeRequest` passes) the history comes from each item's cached parts, resumed from an earlier request's fold,
 * and no warning is collected (`encodeRequest` discards them; collecting some walks the whole history) —
 * `validate` calls this without, printing the history whole; the bytes are the same either way. The model is part of the
 * URL, not the body. Key order is fixed and puts `contents` last: everything before it stays byte-identical
 * while a conversation grows, so a cache-locked prefix can be compared as text.
 */
export const buildGeminiRequest = (
  request: Request,
  toolSchemas: GeminiToolSchemas = "json-schema",
  endpoint: GeminiEndpointFeatures = {},
  encoding?: { readonly fragments: GeminiFragments; readonly snapshots: GeminiSnapshots; readonly envelopes: EnvelopeCache }
): { readonly body: string; readonly warnings: ReadonlyArray<ConfigWarning> } => {
  const names = toolNames(request.tools, "gemini")
  if (encoding !== undefined) {
    // The history goes last, after an envelope printed once per config, tools and prompt (`envelope-cache.ts`).
    const contents = cachedGeminiContents(encoding.fragments, encoding.snapshots, request.items, names)
    const envelope = (r: Request): string => jsonBody(envelopeFields(r, resolveGeminiSettings(r, endpoint).settings, toolSchemas, toolNames(r.tools, "gemini")))
    return { body: encoding.envelopes.body(request, envelope, "contents", contents.text), warnings: [] }
  }
  const { settings, warnings } = resolveGeminiSettings(request, endpoint)
  const history = geminiContents(request.items, names)
  const body = jsonBody({ ...envelopeFields(request, settings, toolSchemas, names), contents: history.contents })
  return { body, warnings: [...warnings, ...history.warnings, ...foreignOutputWarnings(request, "gemini")] }
}

/** The body's fields before `contents`, in the order they are sent. */
const envelopeFields = (request: Request, settings: GeminiSettings, toolSchemas: GeminiToolSchemas, names: ToolNameMap) => {
  const calling = settings.functionCalling
  // Each hosted tool is a Tool entry of its own ({googleSearch:{}}), after the one holding the declarations.
  const tools = withHostedTools(
    request.tools.length === 0
      ? undefined
      : toolSchemas === "json-schema"
        ? toolsFragment(request.tools, "gemini")
        : geminiSubsetToolsFragment(request.tools),
    hostedToolEntries(request.config.hostedTools, "gemini")
  )
  const generationConfig = {
    stopSequences: settings.stopSequences,
    maxOutputTokens: settings.maxOutputTokens,
    temperature: settings.temperature,
    topP: settings.topP,
    topK: settings.topK,
    thinkingConfig:
      settings.thinkingBudget === undefined
        ? undefined
        : { thinkingBudget: settings.thinkingBudget, includeThoughts: settings.thinkingBudget !== 0 },
    ...geminiResponseFields(request.config.responseFormat)
  }
  return {
    systemInstruction:
      request.systemPrompt === undefined || request.systemPrompt === "" ? undefined : { parts: [{ text: request.systemPrompt }] },
    tools: tools === undefined ? undefined : rawJson(tools),
    toolConfig:
      calling === undefined && settings.streamFunctionCallArguments === undefined
        ? undefined
        : {
            functionCallingConfig: {
              mode: calling?.mode,
              allowedFunctionNames:
                calling !== undefined && "allowedFunctionNames" in calling
                  ? calling.allowedFunctionNames.map((name) => names.toWire(name))
                  : undefined,
              streamFunctionCallArguments: settings.streamFunctionCallArguments
            }
          },
    generationConfig: Object.values(generationConfig).every((value) => value === undefined) ? undefined : generationConfig
  } satisfies { readonly [key: string]: JsonBodyValue | undefined }
}
