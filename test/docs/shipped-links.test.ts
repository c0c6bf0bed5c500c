import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Pages in the npm package must not link, relatively, to a file the package leaves out: the link would be dead
// where the package is installed (decision 0099). Such a page links to the repository instead.
const root = fileURLToPath(new URL("../..", import.meta.url))
const files = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { readonly files: ReadonlyArray<string> }).files
const included = files.filter((entry) => !entry.startsWith("!"))
const excluded = files.filter((entry) => entry.startsWith("!")).map((entry) => entry.slice(1))
// npm always packs these, whatever `files` says.
const alwaysPacked = ["package.json", "README.md", "LICENSE"]

const under = (path: string, entry: string): boolean => path === entry || path.startsWith(`${entry}/`)
const shipped = (path: string): boolean =>
  (alwaysPacked.includes(path) || included.some((entry) => under(path, entry))) && !excluded.some((entry) => under(path, entry))

const markdownUnder = (dir: string): Array<string> =>
  readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`
    if (statSync(join(root, path)).isDirectory()) return markdownUnder(path)
    return name.endsWith(".md") ? [path] : []
  })

const pages = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", ...markdownUnder("docs")].filter((page) => existsSync(join(root, page)) && shipped(page))

describe("docs: shipped pages link only to shipped files", () => {
  it("the benchmark tables are not shipped, the rest of docs/ is", () => {
    expect(shipped("docs/benchmarks.md")).toBe(false)
    expect(shipped("docs/architecture.md")).toBe(true)
    expect(pages).toContain("docs/decisions/README.md")
  })
  it.each(pages.map((page) => [page] as const))("%s", (page) => {
    const text = readFileSync(join(root, page), "utf8")
    const targets = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((match) => match[1] as string)
      .filter((target) => !/^[a-z]+:/.test(target))
    const unshipped = targets.filter((target) => {
      const path = relative(root, join(root, dirname(page), target)).split(sep).join("/")
      return !shipped(path)
    })
    expect(unshipped).toEqual([])
  })
})
