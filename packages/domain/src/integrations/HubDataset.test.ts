import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseHubDatasetUrl } from "./HubDataset.ts"

const parsed = (input: string) => Result.getOrUndefined(parseHubDatasetUrl(input))

describe("hub dataset URLs", () => {
  it("reads the id from the forms people paste", () => {
    expect(parsed("https://huggingface.co/datasets/acme/rows")).toBe("acme/rows")
    expect(parsed("https://huggingface.co/datasets/acme/rows/viewer/default/train?p=2")).toBe("acme/rows")
    expect(parsed("https://hub.internal.example/datasets/acme/rows/tree/main")).toBe("acme/rows")
    expect(parsed("hf://datasets/acme/rows.v2")).toBe("acme/rows.v2")
    expect(parsed("  acme/rows  ")).toBe("acme/rows")
  })

  it("rejects everything else", () => {
    for (const input of ["", "acme", "a/b/c", "https://huggingface.co/acme/rows", "https://huggingface.co/models/a/b",
      "ftp://h/datasets/a/b", "https://huggingface.co/datasets/../x", "https://huggingface.co/datasets/a/b%2Fc", "javascript:x/y"]) {
      expect(parsed(input), input).toBeUndefined()
    }
  })

  it("property: an accepted id is always two safe segments, and owner/name round-trips", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9][\w.-]{0,20}$/)
    fc.assert(fc.property(segment, segment, (owner, name) => {
      expect(parsed(`${owner}/${name}`)).toBe(`${owner}/${name}`)
      expect(parsed(`https://huggingface.co/datasets/${owner}/${name}`)).toBe(`${owner}/${name}`)
    }))
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (input) => {
      const id = parsed(input)
      if (id !== undefined) expect(id).toMatch(/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/)
    }))
  })
})
