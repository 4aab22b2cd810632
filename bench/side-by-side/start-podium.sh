#!/usr/bin/env bash
# Start Podium from /work/main (PODIUM_DIR) pinned to SERVER_CPUS (0) on PODIUM_PORT (18090), against
# DATABASE_URL (machine Postgres), with the test session secret; pid to run/podium.pid.
set -euo pipefail
cd "$(dirname "$0")"
PODIUM_DIR=${PODIUM_DIR:-/work/main}
PORT=${PODIUM_PORT:-18090}
HERE=$PWD
( cd "$PODIUM_DIR" && exec env PORT=$PORT HOST=127.0.0.1 DATABASE_URL=$DATABASE_URL DATA_DIR=$HERE/run/podium-data \
  SESSION_JWT_SECRET=test-session-secret-that-is-long-enough-0123456789 SECRETS_KEY=$(cat $HERE/run/secrets-key) \
  ALLOW_PRIVATE_NETWORK_TARGETS=true LOG_LEVEL=Warn \
  taskset -c ${SERVER_CPUS:-0} node_modules/.bin/node packages/server/src/bin.ts serve > $HERE/run/podium.log 2>&1 ) & echo $! > run/podium.pid
for i in $(seq 1 150); do curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz && break; sleep 0.2; done
curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz || { echo "podium not ready; see run/podium.log" >&2; exit 1; }
echo "podium pid $(cat run/podium.pid) on 127.0.0.1:$PORT"
