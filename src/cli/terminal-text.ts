/**
 * Characters that must never reach a terminal raw from untrusted text (the model, tools, files, a provider's error
 * body): C0 controls (ESC starts CSI/OSC sequences that clear the screen, move the cursor, retitle the window or write
 * the clipboard with OSC 52; BEL, backspace, CR overwrite what is shown), DEL, C1 controls (U+0080–U+009F, which some
 * terminals take as 8-bit CSI/OSC introducers) and the bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E,
 * U+200F, U+061C), which reorder what is displayed so that text reads differently from what it is.
 * Newline and tab are kept by `safeForTerminal` (multi-line output) and newline is escaped by `safeLine`.
 */
const UNSAFE_MULTI_LINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
const UNSAFE_ONE_LINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * Shown, not deleted: the reader sees that something was there (`\u001b[2J`), and the escape is plain ASCII that
 * no terminal interprets. Silently dropping characters would hide an attempt and can merge words.
 */
const visible = (character: string): string => `\\u${(character.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`

/** Untrusted text for multi-line output: newline and tab stay, every other control or bidi character is escaped. */
export const safeForTerminal = (text: string): string => text.replace(UNSAFE_MULTI_LINE, visible)

/** Untrusted text that must stay on one line: as `safeForTerminal`, and a newline (CRLF too) is shown as `\n`. */
export const safeLine = (text: string): string => text.replace(/\r?\n/g, "\\n").replace(UNSAFE_ONE_LINE, visible)
