import { createServer, type Server, type Socket, connect } from "node:net"
import type { AddressInfo } from "node:net"

/** A loopback TCP relay that can be cut, to make a real dependency stop answering. */
export interface TcpProxy {
  readonly port: number
  /** Drops every open connection and refuses new ones until `resume`. */
  readonly cut: () => void
  readonly resume: () => void
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (targetHost: string, targetPort: number): Promise<TcpProxy> => {
  let cut = false
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    if (cut) return client.destroy()
    const upstream = connect(targetPort, targetHost)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      cut = true
      for (const socket of sockets) socket.destroy()
    },
    resume: () => {
      cut = false
    },
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
