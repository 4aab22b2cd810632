// Minimal fake OpenAI-compatible upstream (plain node:http).
// POST /v1/chat/completions (also /chat/completions) -> fixed small completion JSON with usage.
// A request with "stream": true is answered as OpenAI streams (text/event-stream, chat.completion.chunk
// events): STREAM_EVENTS content deltas STREAM_GAP_MS apart (the first with the headers, the last with
// finish_reason "stop"), then a usage chunk when stream_options.include_usage is set, then `data: [DONE]`.
// A client closing early stops the stream.
// Env: PORT (default 18080), HOST (default 127.0.0.1), DELAY_MS (default 0) artificial delay per request
//      (before the headers, streamed or not), STREAM_EVENTS (20), STREAM_GAP_MS (3).
import http from 'node:http';

const PORT = Number(process.env.PORT ?? 18080);
const HOST = process.env.HOST ?? '127.0.0.1';
const DELAY_MS = Number(process.env.DELAY_MS ?? 0);
const STREAM_EVENTS = Number(process.env.STREAM_EVENTS ?? 20);
const STREAM_GAP_MS = Number(process.env.STREAM_GAP_MS ?? 3);

let n = 0;
function completion(model) {
  n++;
  return JSON.stringify({
    id: 'chatcmpl-fake' + n,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: model || 'gpt-4o-mini',
    choices: [{
      index: 0,
      message: { role: 'assistant', content: 'Hello! This is a fixed reply from the fake upstream.' },
      logprobs: null,
      finish_reason: 'stop',
    }],
    usage: { prompt_tokens: 12, completion_tokens: 11, total_tokens: 23 },
    system_fingerprint: 'fp_fake',
  });
}

const chunk = (id, model, fields) =>
  'data: ' + JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, system_fingerprint: 'fp_fake', ...fields }) + '\n\n';

function stream(res, model, includeUsage) {
  n++;
  const id = 'chatcmpl-fake' + n;
  model = model || 'gpt-4o-mini';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let sent = 0;
  let timer;
  const next = () => {
    const delta = sent === 0 ? { role: 'assistant', content: 'tok' + sent + ' ' } : { content: 'tok' + sent + ' ' };
    const last = sent === STREAM_EVENTS - 1;
    res.write(chunk(id, model, { choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? 'stop' : null }] }));
    sent++;
    if (!last) { timer = setTimeout(next, STREAM_GAP_MS); return; }
    const usage = includeUsage
      ? chunk(id, model, { choices: [], usage: { prompt_tokens: 12, completion_tokens: STREAM_EVENTS, total_tokens: 12 + STREAM_EVENTS } })
      : '';
    res.end(usage + 'data: [DONE]\n\n');
  };
  res.on('close', () => clearTimeout(timer));
  next();
}

const server = http.createServer((req, res) => {
  if (req.method === 'POST' && (req.url === '/v1/chat/completions' || req.url === '/chat/completions')) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let parsed = {};
      try { parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) ?? {}; } catch { /* ignore */ }
      const send = parsed.stream === true
        ? () => stream(res, parsed.model, parsed.stream_options?.include_usage === true)
        : () => {
          const body = completion(parsed.model);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        };
      if (DELAY_MS > 0) setTimeout(send, DELAY_MS); else send();
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/health') { res.writeHead(200); res.end('ok'); return; }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":"not found"}');
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(PORT, HOST, () => console.log(`fake upstream on http://${HOST}:${PORT} delay=${DELAY_MS}ms stream=${STREAM_EVENTS}x${STREAM_GAP_MS}ms pid=${process.pid}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
