/**
 * What may differ between two runs of an example, or between two machines, and nothing else: the replay
 * provider's ephemeral port and the wording of V8's JSON.parse errors (it changed between Node releases).
 * Everything else an example prints is compared with its guide byte for byte.
 */
const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  [/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>"],
  [/(arguments are not valid JSON: ).*$/gm, "$1<JSON.parse message>"]
]

export const normaliseOutput = (stdout: string): string => RULES.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), stdout)
