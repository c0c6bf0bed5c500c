import { lintHostedTools } from "../hosted-tools.ts"
import type { Request } from "../request.ts"
import type { ConfigWarning, SchemeName } from "../scheme.ts"

/**
 * The warnings every scheme's `validate()` gives for what decision 0025 makes it leave out: provider items from
 * another wire format (meaningless, or refused, anywhere else) and hosted tools declared for another one.
 */
export const foreignOutputWarnings = (request: Request, scheme: SchemeName): Array<ConfigWarning> => {
  const out: Array<ConfigWarning> = []
  request.items.forEach((item, position) => {
    if (item.type === "provider_item" && item.scheme !== scheme) {
      out.push({
        _tag: "ConfigWarning",
        scheme,
        setting: `items[${position}]`,
        message: `provider item ${item.kind} came from ${item.scheme} and cannot be sent to ${scheme}; omitted`
      })
    }
  })
  const hosted = request.config.hostedTools ?? []
  for (const lint of lintHostedTools(hosted, scheme)) {
    out.push({ _tag: "ConfigWarning", scheme, setting: "hostedTools", message: `${lint.message}; omitted` })
  }
  return out
}


