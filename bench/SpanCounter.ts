import { type Exit, Layer, Option, Tracer } from "effect"

/**
 * Counts the outbound calls (spans of kind "client": SQL statements, HTTP requests) made while
 * serving HTTP requests (spans of kind "server"). Calls from background work, such as the job
 * runner polling Postgres, have no server span above them and are left out.
 *
 * Installing any tracer but the native one puts every request on Effect's traced path (a server
 * span per request, attributes recorded), so use it on a server that is not being timed.
 */
export class SpanCounter {
  private served = 0
  private readonly calls = new Map<string, number>()

  readonly layer = Layer.succeed(Tracer.Tracer, Tracer.make({
    span: (options) => new CountedSpan(options, (span) => this.ended(span))
  }))

  reset(): void {
    this.served = 0
    this.calls.clear()
  }

  /** Calls per served request, by kind ("sql", "http GET") and, for SQL, by statement. */
  perRequest(): Record<string, number> {
    const served = this.served
    return Object.fromEntries([...this.calls].map(([name, count]) => [name, served === 0 ? 0 : count / served]))
  }

  private ended(span: Tracer.Span): void {
    if (span.kind === "server") {
      this.served++
    } else if (span.kind === "client" && underServerSpan(span.parent)) {
      const statement = span.attributes.get("db.query.text")
      const method = span.attributes.get("http.request.method")
      const name = typeof statement === "string"
        ? `sql ${statement.replace(/\s+/g, " ").slice(0, 72)}`
        : typeof method === "string"
        ? `http ${method} ${String(span.attributes.get("url.path") ?? "")}`
        : span.name
      this.calls.set(name, (this.calls.get(name) ?? 0) + 1)
    }
  }
}

class CountedSpan extends Tracer.NativeSpan {
  private readonly onEnd: (span: Tracer.Span) => void

  constructor(options: ConstructorParameters<typeof Tracer.NativeSpan>[0], onEnd: (span: Tracer.Span) => void) {
    super(options)
    this.onEnd = onEnd
  }

  override end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    const ended = this.status._tag === "Ended"
    super.end(endTime, exit)
    if (!ended) this.onEnd(this)
  }
}

const underServerSpan = (parent: Option.Option<Tracer.AnySpan>): boolean => {
  for (let span = parent; Option.isSome(span) && span.value._tag === "Span"; span = span.value.parent) {
    if (span.value.kind === "server") return true
  }
  return false
}
