import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** An exported span as the receiver decoded it: ids as lower-case hex, attributes as plain values. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
  readonly resource: Record<string, unknown>
}

/** A loopback OTLP/HTTP collector: `POST /v1/traces` in protobuf (`application/x-protobuf`) or JSON. */
export interface OtlpReceiver {
  readonly url: string
  readonly spans: Array<ReceivedSpan>
  /** The content types of the exports received. */
  readonly contentTypes: Array<string>
  readonly close: () => Promise<void>
}

// --- protobuf wire format, read by the field numbers of opentelemetry/proto (trace/v1, common/v1, resource/v1)

type Field = { readonly number: number; readonly wire: number; readonly value: bigint | Uint8Array }

const fields = (bytes: Uint8Array): Array<Field> => {
  const out: Array<Field> = []
  let at = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      const byte = bytes[at++]
      if (byte === undefined) throw new Error("truncated varint")
      result |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return result
      shift += 7n
    }
  }
  const fixed = (size: number): bigint => {
    let result = 0n
    for (let i = size - 1; i >= 0; i--) result = (result << 8n) | BigInt(bytes[at + i]!)
    at += size
    return result
  }
  while (at < bytes.length) {
    const key = Number(varint())
    const number = key >>> 3
    const wire = key & 7
    if (wire === 0) out.push({ number, wire, value: varint() })
    else if (wire === 1) out.push({ number, wire, value: fixed(8) })
    else if (wire === 5) out.push({ number, wire, value: fixed(4) })
    else if (wire === 2) {
      const length = Number(varint())
      out.push({ number, wire, value: bytes.subarray(at, at + length) })
      at += length
    } else throw new Error(`unsupported wire type ${wire}`)
  }
  return out
}

const text = (value: Field["value"]) => new TextDecoder().decode(value as Uint8Array)
const hex = (value: Field["value"]) => Buffer.from(value as Uint8Array).toString("hex")
const messages = (bytes: Uint8Array, number: number) =>
  fields(bytes).filter((f) => f.number === number).map((f) => f.value as Uint8Array)

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 array (values = 1). */
const anyValue = (bytes: Uint8Array): unknown => {
  for (const f of fields(bytes)) {
    if (f.number === 1) return text(f.value)
    if (f.number === 2) return f.value === 1n
    if (f.number === 3) return Number(BigInt.asIntN(64, f.value as bigint))
    if (f.number === 4) {
      const view = new DataView(new ArrayBuffer(8))
      view.setBigUint64(0, f.value as bigint, true)
      return view.getFloat64(0, true)
    }
    if (f.number === 5) return messages(f.value as Uint8Array, 1).map(anyValue)
  }
  return undefined
}

/** KeyValue: 1 key, 2 value. */
const keyValues = (list: Array<Uint8Array>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const kv of list) {
    const parts = fields(kv)
    const key = parts.find((f) => f.number === 1)
    const value = parts.find((f) => f.number === 2)
    if (key !== undefined) out[text(key.value)] = value === undefined ? undefined : anyValue(value.value as Uint8Array)
  }
  return out
}

/** ExportTraceServiceRequest: resource_spans 1 → resource 1 (attributes 1), scope_spans 2 → spans 2. */
export const decodeTracesProtobuf = (body: Uint8Array): Array<ReceivedSpan> =>
  messages(body, 1).flatMap((resourceSpans) => {
    const resource = keyValues(messages(resourceSpans, 1).flatMap((r) => messages(r, 1)))
    return messages(resourceSpans, 2).flatMap((scopeSpans) =>
      messages(scopeSpans, 2).map((span) => {
        const parts = fields(span)
        const one = (n: number) => parts.find((f) => f.number === n)
        const parent = one(4)
        return {
          traceId: hex(one(1)!.value),
          spanId: hex(one(2)!.value),
          parentSpanId: parent === undefined ? "" : hex(parent.value),
          name: text(one(5)!.value),
          kind: Number(one(6)?.value ?? 0n),
          attributes: keyValues(parts.filter((f) => f.number === 9).map((f) => f.value as Uint8Array)),
          resource
        }
      })
    )
  })

// --- OTLP/JSON

interface JsonValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly arrayValue?: { readonly values: ReadonlyArray<JsonValue> }
}
const jsonValue = (value: JsonValue): unknown =>
  value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
    value.doubleValue ?? value.arrayValue?.values.map(jsonValue)
const jsonAttributes = (list: ReadonlyArray<{ readonly key: string; readonly value: JsonValue }> | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, jsonValue(value)]))

export const decodeTracesJson = (body: any): Array<ReceivedSpan> =>
  (body.resourceSpans ?? []).flatMap((rs: any) => {
    const resource = jsonAttributes(rs.resource?.attributes)
    return (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((span: any) => ({
        traceId: String(span.traceId).toLowerCase(),
        spanId: String(span.spanId).toLowerCase(),
        parentSpanId: String(span.parentSpanId ?? "").toLowerCase(),
        name: span.name,
        kind: Number(span.kind),
        attributes: jsonAttributes(span.attributes),
        resource
      }))
    )
  })

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const spans: Array<ReceivedSpan> = []
  const contentTypes: Array<string> = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404)
        return res.end()
      }
      const body = Buffer.concat(chunks)
      const contentType = req.headers["content-type"] ?? ""
      contentTypes.push(contentType)
      try {
        spans.push(...(contentType.startsWith("application/json")
          ? decodeTracesJson(JSON.parse(body.toString("utf8")))
          : decodeTracesProtobuf(new Uint8Array(body))))
      } catch (error) {
        res.writeHead(400, { "content-type": "text/plain" })
        return res.end(String(error))
      }
      res.writeHead(200, { "content-type": contentType.startsWith("application/json") ? "application/json" : "application/x-protobuf" })
      res.end(contentType.startsWith("application/json") ? "{}" : "")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
