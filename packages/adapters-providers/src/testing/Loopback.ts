import { createServer, type RequestListener, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll } from "vitest"

/**
 * A fake upstream on 127.0.0.1 for the file's tests: listening before they run, closed (with its
 * open connections) after. `url()` is its base URL once it listens.
 */
export const loopbackServer = (handler: RequestListener): { readonly url: () => string } => {
  let server: Server
  let url = ""
  beforeAll(async () => {
    server = createServer(handler)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return { url: () => url }
}
