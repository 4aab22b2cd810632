/**
 * Upstream words reach users, traces and logs: they must never repeat a candidate's key, whole, in
 * part, or base64-encoded (a `Basic` header echoed back, a key quoted as "sk-abc1…wxyz").
 *
 * Every run of at least `minRun` characters of the key, or of its base64 forms (standard and URL
 * alphabets, at each of the three byte alignments a key can have inside a longer encoding), is
 * replaced by `[redacted]`. Shorter keys are redacted only whole.
 */
export const minRun = 6

const base64Cores = (secret: string): Array<string> => {
  const bytes = Buffer.from(secret, "utf8")
  const cores: Array<string> = []
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64")
    // only the characters made from the key's own bits, not the neighbours'
    const core = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6))
    cores.push(core, core.replaceAll("+", "-").replaceAll("/", "_"))
  }
  return cores
}

export const redactSecret = (text: string, secret: string): string => {
  if (secret === "" || text === "") return text
  if (secret.length < minRun) return text.split(secret).join("[redacted]")
  const grams = new Set<string>()
  for (const form of [secret, ...base64Cores(secret)]) {
    for (let i = 0; i + minRun <= form.length; i++) grams.add(form.slice(i, i + minRun))
  }
  // mark every character covered by a run of the key, then replace each covered stretch once
  const covered = new Uint8Array(text.length)
  let any = false
  for (let i = 0; i + minRun <= text.length; i++) {
    if (grams.has(text.slice(i, i + minRun))) {
      covered.fill(1, i, i + minRun)
      any = true
    }
  }
  if (!any) return text
  let out = ""
  for (let i = 0; i < text.length;) {
    if (covered[i] === 1) {
      while (i < text.length && covered[i] === 1) i++
      out += "[redacted]"
    } else {
      out += text[i++]
    }
  }
  return out
}
