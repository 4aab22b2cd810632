import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface HubFake {
  readonly url: string
  readonly close: () => Promise<void>
}

/** A loopback hub that knows one public dataset, `acme/rows`, with 150 rows. */
export const startHubFake = async (): Promise<HubFake> => {
  const dataset = JSON.stringify({
    id: "acme/rows",
    private: false,
    cardData: { dataset_info: { splits: [{ name: "train", num_examples: 150 }] } }
  })
  const server = createServer((request, response) => {
    const found = request.method === "GET" && request.url === "/api/datasets/acme/rows"
    response.writeHead(found ? 200 : 404, { "content-type": "application/json" })
    response.end(found ? dataset : JSON.stringify({ error: "Repository not found" }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      })
  }
}
