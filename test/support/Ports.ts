import { createServer } from "node:net"

/**
 * A port that is free now, chosen below the kernel's ephemeral range (32768–60999 here): a port the
 * kernel handed out for `listen(0)` and took back could be handed to another test's server the
 * next moment, which would then answer this child's health check (test files run side by side). Shared by every test that starts `podium` as a process.
 */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000)
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.once("error", () => resolve(false))
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
    })
    if (free) return port
  }
}
