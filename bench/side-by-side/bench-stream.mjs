// Streaming side-by-side: direct fake upstream, Portkey, bare proxy, Podium (and EXTRA_TARGETS_JSON, as
// bench-proxy.mjs takes them). autocannon cannot time first bytes, so this is its own node:http client
// (keep-alive Agent per target), reading every answer to its end; run it pinned (taskset -c 1).
// Each request is `stream: true` with stream_options.include_usage; an answer counts only if it is a
// 200 ending in `data: [DONE]` (any other fails the run loudly).
// Per rep, two phases:
//   ttfb: 1 connection per target, the targets taking turns one stream at a time (so each sees the
//         machine alike): TTFB_WARMUP unrecorded rounds, then TTFB_COUNT recorded. Times (ms) from the
//         request's write to the answer's headers, its first body byte, its first content delta, its end.
//   load: LOAD_CONNS streams at a time to one target for DURATION s (each connection finishes the
//         stream it has begun): streams/s, whole-stream and first-byte percentiles, CPU µs per stream of
//         each server process (from /proc), as bench-proxy.mjs records them.
// Order of targets alternates per rep. Env: REPS=2 TTFB_COUNT=200 TTFB_WARMUP=30 LOAD_CONNS=100
// DURATION=8 WARMUP=3 (s of unrecorded load per target before rep 1) TARGETS=direct,portkey,bare[,…]
// UP_URL GW_URL BARE_URL EXTRA_TARGETS_JSON OUT LABEL
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const env = process.env;
const REPS = Number(env.REPS ?? 2);
const TTFB_COUNT = Number(env.TTFB_COUNT ?? 200);
const TTFB_WARMUP = Number(env.TTFB_WARMUP ?? 30);
const LOAD_CONNS = Number(env.LOAD_CONNS ?? 100);
const DURATION = Number(env.DURATION ?? 8);
const WARMUP = Number(env.WARMUP ?? 3);
const UP_URL = env.UP_URL ?? 'http://127.0.0.1:18080';
const GW_URL = env.GW_URL ?? 'http://127.0.0.1:8787';
const OUT = env.OUT ?? path.join(here, 'results', `stream-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);

const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Say hello in one short sentence.' },
  ],
  max_tokens: 32,
  stream: true,
  stream_options: { include_usage: true },
});

const allTargets = {
  direct: { name: 'direct', url: `${UP_URL}/v1/chat/completions`, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-fake' }, pidFiles: ['run/upstream.pid'] },
  portkey: {
    name: 'portkey', url: `${GW_URL}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-fake', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${UP_URL}/v1` },
    pidFiles: ['run/upstream.pid', 'run/gateway.pid'],
  },
  bare: { name: 'bare', url: `${env.BARE_URL ?? 'http://127.0.0.1:18081'}/v1/chat/completions`, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-fake' }, pidFiles: ['run/upstream.pid', 'run/bareproxy.pid'] },
};
for (const t of JSON.parse(env.EXTRA_TARGETS_JSON ?? '[]')) {
  allTargets[t.name] = { name: t.name, url: t.url, headers: t.headers, pidFiles: ['run/upstream.pid', ...(t.pidFile ? [t.pidFile] : [])] };
}
const TARGETS = (env.TARGETS ?? 'direct,portkey,bare').split(',').map((n) => {
  if (!allTargets[n]) throw new Error(`unknown target ${n}`);
  return { ...allTargets[n], agent: new http.Agent({ keepAlive: true, maxSockets: Math.max(LOAD_CONNS, 1) }) };
});

const CLK_TCK = 100;
const readPid = (file) => { try { return Number(fs.readFileSync(path.join(here, file), 'utf8').trim()); } catch { return null; } };
function procCpuSec(pid) {
  try { const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) / CLK_TCK; } catch { return NaN; }
}
const pidsOf = (t) => Object.fromEntries(t.pidFiles.map((f) => [path.basename(f, '.pid'), readPid(f)]));
const pct = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
const r2 = (x) => Math.round(x * 100) / 100;
const r3 = (x) => Math.round(x * 1000) / 1000;
const ms = (a, b) => Number(b - a) / 1e6;
const DONE = 'data: [DONE]\n\n';
const CONTENT = Buffer.from('"content"');

/** One streamed request; resolves {headers, first, content, total} in ms, or throws why it failed. */
function stream(t) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(t.url, { method: 'POST', headers: t.headers, agent: t.agent }, (res) => {
      const th = process.hrtime.bigint();
      let tf = 0n, tc = 0n, tail = '', events = 0, prev = '';
      res.on('data', (chunk) => {
        const now = process.hrtime.bigint();
        if (tf === 0n) tf = now;
        if (tc === 0n && chunk.includes(CONTENT)) tc = now;
        const text = chunk.toString('latin1');
        const joined = prev + text;
        for (let at = joined.indexOf('\n\n'); at !== -1; at = joined.indexOf('\n\n', at + 2)) events++;
        prev = text.slice(-1);
        tail = (tail + text).slice(-64);
      });
      res.on('end', () => {
        const te = process.hrtime.bigint();
        if (res.statusCode !== 200 || !tail.endsWith(DONE)) return reject(new Error(`${t.name}: ${res.statusCode} ${tail}`));
        resolve({ headers: ms(t0, th), first: ms(t0, tf), content: ms(t0, tc), total: ms(t0, te), events });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const summarize = (xs) => { const s = Float64Array.from(xs).sort(); return { p50: r3(pct(s, 50)), p90: r3(pct(s, 90)), p99: r3(pct(s, 99)), mean: r3(s.reduce((a, b) => a + b, 0) / (s.length || 1)), n: s.length }; };

async function ttfbPhase(order) {
  const rec = Object.fromEntries(order.map((t) => [t.name, { headers: [], first: [], content: [], total: [], events: [Infinity, 0] }]));
  for (let i = 0; i < TTFB_WARMUP + TTFB_COUNT; i++) {
    for (const t of order) {
      const r = await stream(t);
      if (i < TTFB_WARMUP) continue;
      const x = rec[t.name];
      for (const k of ['headers', 'first', 'content', 'total']) x[k].push(r[k]);
      x.events = [Math.min(x.events[0], r.events), Math.max(x.events[1], r.events)];
    }
  }
  return order.map((t) => ({ target: t.name, phase: 'ttfb', connections: 1, headers_ms: summarize(rec[t.name].headers), first_byte_ms: summarize(rec[t.name].first), first_content_ms: summarize(rec[t.name].content), total_ms: summarize(rec[t.name].total), events: rec[t.name].events }));
}

async function loadPhase(t, seconds, record = true) {
  const pids = pidsOf(t);
  const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, procCpuSec(p)]));
  const self0 = process.cpuUsage();
  const first = [], total = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => { while (performance.now() < deadline) { const r = await stream(t); first.push(r.first); total.push(r.total); } };
  await Promise.all(Array.from({ length: LOAD_CONNS }, loop));
  const wall = (performance.now() - started) / 1000;
  const self = process.cpuUsage(self0);
  if (!record) return null;
  const cpu = Object.fromEntries(Object.keys(pids).map((k) => [k, r3(procCpuSec(pids[k]) - cpu0[k])]));
  const n = total.length;
  return {
    target: t.name, phase: 'load', connections: LOAD_CONNS, seconds: r3(wall), streams: n, streams_per_s: r2(n / wall),
    total_ms: summarize(total), first_byte_ms: summarize(first),
    cpu_sec: cpu, cpu_us_per_stream: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, r2((v * 1e6) / (n || 1))])),
    loadgen_cpu_util: r2((self.user + self.system) / 1e6 / wall), loadavg: os.loadavg().map(r2),
  };
}

const meta = {
  label: env.LABEL ?? '', started: new Date().toISOString(), node_loadgen: process.version, cpus: os.cpus().length, loadavg_start: os.loadavg().map(r2),
  reps: REPS, ttfb_count: TTFB_COUNT, ttfb_warmup: TTFB_WARMUP, load_conns: LOAD_CONNS, duration: DURATION, warmup: WARMUP,
  targets: TARGETS.map((t) => ({ name: t.name, url: t.url })), body: JSON.parse(body),
};
console.error(`# ${meta.label} reps=${REPS} targets=${TARGETS.map((t) => t.name)} load=${LOAD_CONNS}x${DURATION}s ttfb=${TTFB_COUNT} loadavg=${meta.loadavg_start}`);
for (const t of TARGETS) {
  const r = await stream(t);
  console.error(`sanity ${t.name}: events=${r.events} first=${r3(r.first)}ms total=${r3(r.total)}ms`);
  if (WARMUP > 0) await loadPhase(t, WARMUP, false);
}
const results = [];
for (let rep = 1; rep <= REPS; rep++) {
  const order = rep % 2 === 1 ? TARGETS : [...TARGETS].reverse();
  for (const r of await ttfbPhase(order)) {
    results.push({ rep, ...r });
    console.error(`rep ${rep} ttfb ${r.target.padEnd(8)} headers p50=${r.headers_ms.p50} first byte p50=${r.first_byte_ms.p50} first content p50=${r.first_content_ms.p50} total p50=${r.total_ms.p50} ms events=${r.events}`);
  }
  for (const t of order) {
    const r = await loadPhase(t, DURATION);
    results.push({ rep, ...r });
    console.error(`rep ${rep} load c=${LOAD_CONNS} ${t.name.padEnd(8)} streams/s=${r.streams_per_s} total p50=${r.total_ms.p50} p99=${r.total_ms.p99} first byte p50=${r.first_byte_ms.p50} ms cpu_us/stream=${JSON.stringify(r.cpu_us_per_stream)} loadgen=${r.loadgen_cpu_util} loadavg=${r.loadavg}`);
  }
}
TARGETS.forEach((t) => t.agent.destroy());
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, JSON.stringify({ meta, results }, null, 2));
console.error(`written ${OUT}`);
