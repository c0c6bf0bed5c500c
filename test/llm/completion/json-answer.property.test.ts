import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { readJsonAnswer } from "../../../src/llm/completion/json-answer.ts"

const prose = fc.string({ maxLength: 40 }).filter((s) => !/[[{"\\<]/.test(s))
const object = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }), { minKeys: 1, maxKeys: 5 })

describe("readJsonAnswer", () => {
  it("finds an object wherever the model put it: bare, fenced, after prose, after a reasoning block", () => {
    fc.assert(
      fc.property(object, prose, prose, fc.constantFrom("bare", "fence", "think"), (value, before, after, wrap) => {
        const json = JSON.stringify(value)
        const text = wrap === "bare" ? `${before}${json}${after}` : wrap === "fence" ? `${before}\n\`\`\`json\n${json}\n\`\`\`\n${after}` : `<think>${before}{[</think>${json}`
        const read = readJsonAnswer(text)
        expect(read).toEqual({ ok: true, value: JSON.parse(json) })
      }),
      { numRuns: 300 }
    )
  })

  it("never throws and always answers, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400, unit: fc.constantFrom("{", "}", "[", "]", '"', "\\", "a", " ", "<think>", "null", ":", ",", "1") }), (text) => {
        const read = readJsonAnswer(text)
        expect(typeof read.ok).toBe("boolean")
        if (read.ok) expect(read.value).not.toBeNull()
      }),
      { numRuns: 500 }
    )
  })

  it("keeps a reasoning tag inside the answer's strings: only leading blocks are reasoning", () => {
    expect(readJsonAnswer('<think>x</think>\n{"note":"<think>not reasoning"}')).toEqual({ ok: true, value: { note: "<think>not reasoning" } })
  })
})
