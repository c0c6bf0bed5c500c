import type { PluginContext } from "llm-worker/plugin-llm"

// The seed's structured example: meeting notes in, validated tasks out.
export const manifest = { name: "paste-to-tasks", version: "1.0.0", description: "Turn freeform meeting notes into structured tasks." }

const TASKS_SCHEMA = {
  type: "object",
  properties: {
    tasks: {
      type: "array",
      items: {
        type: "object",
        properties: {
          owner: { type: "string" },
          action: { type: "string" },
          due: { type: "string", description: "ISO date or empty" }
        },
        required: ["action"]
      }
    }
  },
  required: ["tasks"]
}

interface Tasks {
  readonly tasks: ReadonlyArray<{ readonly owner?: string; readonly action: string; readonly due?: string }>
}

export function register(ctx: PluginContext): void {
  ctx.registerCommand({
    name: "paste-to-tasks",
    handler: (raw, { signal }) => pasteToTasks(ctx, raw, signal),
    description: "Turn freeform meeting notes into structured tasks.",
    argsHint: "<text>"
  })
}

async function pasteToTasks(ctx: PluginContext, rawArgs: string, signal: AbortSignal): Promise<string> {
  if (rawArgs.trim() === "") return "Usage: /paste-to-tasks <meeting notes>"
  const result = await ctx.llm.completeStructured({
    instructions:
      "Extract concrete action items from these meeting notes. One task per actionable line. If no owner is named, leave 'owner' blank.",
    input: [{ type: "text", text: rawArgs }],
    schema: TASKS_SCHEMA,
    schemaName: "meeting.tasks",
    purpose: "paste-to-tasks",
    temperature: 0,
    maxTokens: 512,
    signal
  })
  if (result.parsed === null) return `Couldn't parse a response. Raw output:\n${result.text}`
  const { tasks } = result.parsed as Tasks
  const lines = tasks.map((task) => `- [${task.owner || "?"}] ${task.action}`)
  return lines.join("\n") || "(no tasks found)"
}
