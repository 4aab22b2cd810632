import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"

/**
 * A Node HTTP server that holds requests arriving before the application's handler is attached
 * and hands them over once it is. Node drops `request` events that have no listener, and a
 * dropped request is never answered: without this, a client that connects in the moment between
 * `listen` and the handler being installed would wait forever (and hold up shutdown).
 */
export const createHoldingServer = (): Server => {
  const server = createServer()
  const held: Array<readonly [IncomingMessage, ServerResponse]> = []
  const hold = (request: IncomingMessage, response: ServerResponse) => {
    held.push([request, response])
  }
  const handOver = (event: string | symbol, listener: (...args: Array<any>) => void) => {
    if (event !== "request" || listener === hold) return
    server.off("newListener", handOver)
    server.off("request", hold)
    queueMicrotask(() => {
      for (const [request, response] of held.splice(0)) listener(request, response)
    })
  }
  server.on("request", hold)
  server.on("newListener", handOver)
  return server
}
