// Markdown tables from results written by bench-stream.mjs. Usage: node report-stream.mjs results/stream.json [...]
// Medians over reps; "added" and ratios are computed per rep (same minute) against direct and the bare proxy, then the median.
import fs from 'node:fs';

const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
for (const file of process.argv.slice(2)) {
  const { meta, results } = JSON.parse(fs.readFileSync(file, 'utf8'));
  const targets = [...new Set(results.map((r) => r.target))];
  const of = (phase, t) => results.filter((r) => r.phase === phase && r.target === t);
  const pair = (phase, t, other, g) => med(of(phase, t).map((r) => { const o = results.find((x) => x.phase === phase && x.rep === r.rep && x.target === other); return o ? g(r, o) : NaN; }).filter(Number.isFinite));
  console.log(`\n### ${meta.label} (${file})\n\nstarted ${meta.started}, reps=${meta.reps}, TTFB ${meta.ttfb_count} streams/target/rep at 1 connection (targets in turns), load ${meta.load_conns} connections × ${meta.duration}s, loadavg at start ${meta.loadavg_start.join(' ')}\n`);
  console.log('| target | TTFB p50 ms | added TTFB p50 ms | TTFB ÷ bare | headers p50 ms | stream p50 ms @1 | stream p50 ms @100 | stream p99 ms @100 | streams/s @100 (min–max) | ÷ direct | ÷ bare | first byte p50 ms @100 | proxy CPU µs/stream |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of targets) {
    const tt = of('ttfb', t), ld = of('load', t);
    const sps = ld.map((r) => r.streams_per_s);
    const key = Object.keys(ld[0].cpu_us_per_stream).find((k) => k !== 'upstream');
    console.log(`| ${t} | ${f(med(tt.map((r) => r.first_byte_ms.p50)))} | ${t === 'direct' ? '-' : f(pair('ttfb', t, 'direct', (r, o) => r.first_byte_ms.p50 - o.first_byte_ms.p50))} | ${f(pair('ttfb', t, 'bare', (r, o) => r.first_byte_ms.p50 / o.first_byte_ms.p50))} | ${f(med(tt.map((r) => r.headers_ms.p50)))} | ${f(med(tt.map((r) => r.total_ms.p50)))} | ${f(med(ld.map((r) => r.total_ms.p50)))} | ${f(med(ld.map((r) => r.total_ms.p99)))} | ${Math.round(med(sps))} (${Math.round(Math.min(...sps))}–${Math.round(Math.max(...sps))}) | ${f(pair('load', t, 'direct', (r, o) => r.streams_per_s / o.streams_per_s), 3)} | ${f(pair('load', t, 'bare', (r, o) => r.streams_per_s / o.streams_per_s), 3)} | ${f(med(ld.map((r) => r.first_byte_ms.p50)))} | ${key ? Math.round(med(ld.map((r) => r.cpu_us_per_stream[key]))) : '-'} (upstream ${Math.round(med(ld.map((r) => r.cpu_us_per_stream.upstream)))}) |`);
  }
}
