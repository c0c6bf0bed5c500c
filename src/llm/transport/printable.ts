import { clip } from "../../schema/quote.ts"

/**
 * C0/C1 controls, DEL, and the characters that reorder or hide text (bidi embeddings, overrides, isolates and
 * marks, line/paragraph separators). A proxy page or a hostile server decides what lands in our error messages;
 * written raw to a terminal such text can clear the screen, set the clipboard (OSC 52) or disguise itself.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** `text` clipped to `max` characters, every unsafe character shown as a visible `\uXXXX` escape. */
export const printable = (text: string, max: number): string =>
  clip(text, max).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** A URL as it may be shown: user name and password replaced, so credentials never reach an error message. */
export const shownUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.username === "" && parsed.password === "") return url
    parsed.username = "***"
    parsed.password = ""
    return parsed.href
  } catch {
    return printable(url, 200)
  }
}
