import type { Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { z } from "zod"
import type { LlmClient } from "../../src/llm/client.ts"
import { completeObject, type ObjectCompletion } from "../../src/llm/completion/complete.ts"
import type { PluginLlmError } from "../../src/plugin-llm/errors.ts"
import type { CompleteResult, PluginLlm, StructuredResult } from "../../src/plugin-llm/plugin-llm.ts"
import { jsonSchema } from "../../src/schema/codec.ts"

declare const llm: PluginLlm
declare const client: LlmClient
const Tasks = z.object({ tasks: z.array(z.object({ action: z.string(), owner: z.string().optional() })) })
const input = [{ type: "text" as const, text: "x" }]

describe("types of the plugin LLM lane", () => {
  it("types parsed from zod, a typed raw schema, or unknown without a schema", () => {
    if (Math.random() > 2) {
      expectTypeOf(llm.completeStructured({ instructions: "i", input, jsonSchema: Tasks })).resolves.toEqualTypeOf<
        StructuredResult<{ tasks: Array<{ action: string; owner?: string | undefined }> }>
      >()
      expectTypeOf(llm.completeStructured({ instructions: "i", input, jsonSchema: jsonSchema<{ n: number }>({ type: "object" }) })).resolves.toEqualTypeOf<StructuredResult<{ n: number }>>()
      expectTypeOf(llm.completeStructured({ instructions: "i", input, jsonMode: true })).resolves.toEqualTypeOf<StructuredResult<unknown>>()
      expectTypeOf(llm.complete({ messages: [{ role: "user", content: "x" }] })).resolves.toEqualTypeOf<CompleteResult>()
      expectTypeOf(llm.completeEffect({ messages: [] })).toEqualTypeOf<Effect.Effect<CompleteResult, PluginLlmError>>()
      expectTypeOf(completeObject(client, { input: "x", schema: Tasks })).resolves.toEqualTypeOf<
        ObjectCompletion<{ tasks: Array<{ action: string; owner?: string | undefined }> }>
      >()
    }
  })

  it("refuses what must not compile", () => {
    if (Math.random() > 2) {
      // @ts-expect-error complete needs messages
      void llm.complete({ purpose: "x" })
      // @ts-expect-error a misspelt option is not silently ignored
      void llm.complete({ messages: [], modle: "gpt-4.1" })
      // @ts-expect-error roles are the OpenAI ones
      void llm.complete({ messages: [{ role: "tool", content: "x" }] })
      // @ts-expect-error completeStructured needs instructions and input
      void llm.completeStructured({ jsonMode: true })
      // @ts-expect-error an image block has data or url
      void llm.completeStructured({ instructions: "i", input: [{ type: "image" }] })
      // @ts-expect-error the Effect form takes no signal (interrupt the fiber instead)
      void llm.completeEffect({ messages: [], signal: new AbortController().signal })
      // @ts-expect-error completeObject needs a schema
      void completeObject(client, { input: "x" })
    }
  })
})

describe("completeStructured: `schema`, with `jsonSchema` as its deprecated alias", () => {
  it("types parsed the same from either name; both at once does not compile", () => {
    if (Math.random() > 2) {
      expectTypeOf(llm.completeStructured({ instructions: "i", input, schema: Tasks })).resolves.toEqualTypeOf<
        StructuredResult<{ tasks: Array<{ action: string; owner?: string | undefined }> }>
      >()
      expectTypeOf(llm.completeStructuredEffect({ instructions: "i", input, schema: jsonSchema<{ n: number }>({ type: "object" }) })).toEqualTypeOf<
        Effect.Effect<StructuredResult<{ n: number }>, PluginLlmError>
      >()
      // @ts-expect-error both names at once
      void llm.completeStructured({ instructions: "i", input, schema: Tasks, jsonSchema: Tasks })
      // @ts-expect-error both names at once, in the Effect form too
      void llm.completeStructuredEffect({ instructions: "i", input, schema: Tasks, jsonSchema: Tasks })
    }
  })
})
