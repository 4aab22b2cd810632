#!/usr/bin/env bash
# Start the fake upstream and the Portkey gateway on loopback, pinned to SERVER_CPUS.
# Env: NODE_BIN (default: system node), SERVER_CPUS (default 0; "all" = no pinning),
#      DELAY_MS (upstream delay, default 0), UP_PORT (18080), GW_PORT (8787)
set -euo pipefail
cd "$(dirname "$0")"
NODE_BIN=${NODE_BIN:-node}
SERVER_CPUS=${SERVER_CPUS:-0}
DELAY_MS=${DELAY_MS:-0}
UP_PORT=${UP_PORT:-18080}
GW_PORT=${GW_PORT:-8787}
mkdir -p run
PIN=""; [ "$SERVER_CPUS" != "all" ] && PIN="taskset -c $SERVER_CPUS"
for f in run/upstream.pid run/gateway.pid run/bareproxy.pid; do
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then echo "already running: $f ($(cat "$f")); run ./stop-servers.sh first"; exit 1; fi
done
PORT=$UP_PORT DELAY_MS=$DELAY_MS STREAM_EVENTS=${STREAM_EVENTS:-20} STREAM_GAP_MS=${STREAM_GAP_MS:-3} nohup $PIN "$NODE_BIN" fake-upstream.mjs > run/upstream.log 2>&1 &
echo $! > run/upstream.pid
NODE_ENV=${GW_NODE_ENV:-development} nohup $PIN "$NODE_BIN" --import ./loopback-only.mjs ${GW_PRELOAD:+--import $GW_PRELOAD} \
  node_modules/@portkey-ai/gateway/build/start-server.js --headless --port=$GW_PORT > run/gateway.log 2>&1 &
echo $! > run/gateway.pid
PORT=${BARE_PORT:-18081} UPSTREAM=http://127.0.0.1:$UP_PORT nohup $PIN "$NODE_BIN" bare-proxy.mjs > run/bareproxy.log 2>&1 &
echo $! > run/bareproxy.pid
# wait for readiness
ready=0
for i in $(seq 1 100); do
  if curl -sf -o /dev/null http://127.0.0.1:$UP_PORT/health && curl -sf -o /dev/null http://127.0.0.1:$GW_PORT/ \
     && curl -sf -o /dev/null -X POST -H 'content-type: application/json' -d '{}' http://127.0.0.1:${BARE_PORT:-18081}/v1/chat/completions; then ready=1; break; fi
  sleep 0.2
done
[ $ready = 1 ] || { echo "servers not ready after 20s; see run/*.log" >&2; exit 1; }
echo "bare proxy pid $(cat run/bareproxy.pid) on 127.0.0.1:${BARE_PORT:-18081}"
echo "upstream pid $(cat run/upstream.pid) on 127.0.0.1:$UP_PORT (delay ${DELAY_MS}ms); gateway pid $(cat run/gateway.pid) on 127.0.0.1:$GW_PORT; node=$("$NODE_BIN" --version); cpus=$SERVER_CPUS"
