// Reference "floor" for a Node proxy on this machine: node:http server -> keep-alive http.Agent -> upstream.
// No auth, no DB, no validation. Buffers the request body, forwards it, buffers the upstream response,
// JSON.parses it to read `usage` (what a trace recorder would need), and returns the bytes unchanged.
// A streamed answer (text/event-stream) is piped through chunk by chunk as it arrives, keeping the
// stream's last bytes to read `usage` from at its end; a client closing early closes the upstream's.
// Env: PORT (18081), UPSTREAM (http://127.0.0.1:18080)
import http from 'node:http';

const PORT = Number(process.env.PORT ?? 18081);
const UP = new URL(process.env.UPSTREAM ?? 'http://127.0.0.1:18080');
const agent = new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 512 });
let tokens = 0;

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) { res.writeHead(404); res.end(); return; }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const up = http.request({
      host: UP.hostname, port: UP.port, path: '/v1/chat/completions', method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: req.headers.authorization ?? '' },
    }, (ur) => {
      if ((ur.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.writeHead(ur.statusCode ?? 502, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.on('close', () => { if (!ur.complete) ur.destroy(); });
        let last = '';
        ur.on('data', (c) => { res.write(c); last = (last + c.toString('utf8')).slice(-4096); });
        ur.on('end', () => {
          const line = last.split('\n').find((l) => l.startsWith('data: {') && l.includes('"usage"'));
          try { tokens += JSON.parse(line.slice(6)).usage?.total_tokens ?? 0; } catch { /* ignore */ }
          res.end();
        });
        return;
      }
      const rc = [];
      ur.on('data', (c) => rc.push(c));
      ur.on('end', () => {
        const out = Buffer.concat(rc);
        try { tokens += JSON.parse(out.toString('utf8')).usage?.total_tokens ?? 0; } catch { /* ignore */ }
        res.writeHead(ur.statusCode ?? 502, { 'content-type': 'application/json', 'content-length': out.length });
        res.end(out);
      });
    });
    up.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
    up.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, '127.0.0.1', () => console.log(`bare proxy on 127.0.0.1:${PORT} -> ${UP.href} pid=${process.pid}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
