// Preload (node --import) for the Portkey gateway's streaming route only. Portkey 1.15.2 on Node 24
// appends its x-portkey-* headers to a streamed response whose Headers are immutable, throws
// `TypeError: immutable` and answers {"status":"failure","message":"Something went wrong"}
// (Portkey-AI/gateway issues #1389 and #1550; fix proposed in PR #1551). This makes append/set/delete
// on immutable Headers a no-op instead, so the stream goes through without those headers.
const wrap = (name) => {
  const orig = Headers.prototype[name];
  Headers.prototype[name] = function (...args) {
    try { return orig.apply(this, args); } catch (e) { if (e instanceof TypeError && e.message === 'immutable') return undefined; throw e; }
  };
};
for (const name of ['append', 'set', 'delete']) wrap(name);
