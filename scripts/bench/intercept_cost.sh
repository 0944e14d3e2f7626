#!/usr/bin/env bash
# Cost of an intercepted CONNECT (issue 8), as a client sees it: the TLS
# handshake with the gateway on a first connection to a host (leaf minted) and
# on later ones (leaf cached). Measured by curl (time_appconnect - time_connect,
# which covers CONNECT + 200 + TLS handshake; the upstream is never contacted
# before the first request, so it does not count).
#
#   scripts/bench/intercept_cost.sh [N]     # N hosts (default 50)
#   GATEWAY_BIN=.build/debug/gateway scripts/bench/intercept_cost.sh
set -Eeuo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${GATEWAY_BIN:-$ROOT/.build/release/gateway}
N=${1:-50}
[[ -x "$BIN" ]] || { echo "no gateway binary at $BIN (swift build -c release --product gateway)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/gateway-intercept.XXXXXX)
read -r PORT ADMIN < <(python3 "$ROOT/scripts/bench/freeports.py" 2)
cat >"$WORK/gateway.yaml" <<EOF
listen: { proxy: "127.0.0.1:$PORT", admin: "127.0.0.1:$ADMIN" }
log_level: debug
state_dir: $WORK/state
upstreams:
  - name: bench
    hosts: ["*.intercept.test"]
    intercept: true
EOF
"$BIN" run --config "$WORK/gateway.yaml" >"$WORK/gateway.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$ADMIN/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN" ca export --config "$WORK/gateway.yaml" >"$WORK/ca.pem" 2>/dev/null

handshake() { # handshake HOST: milliseconds from TCP connected to TLS established
    { curl -s -o /dev/null --max-time 5 --cacert "$WORK/ca.pem" -x "http://127.0.0.1:$PORT" \
        -w '%{time_connect} %{time_appconnect}\n' "https://$1/" || true; } |
        awk '{ printf "%.3f\n", ($2 - $1) * 1000 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f ms (n=%d, min %.2f, max %.2f)\n", m, NR, v[1], v[NR] }'; }

handshake warmup.intercept.test >/dev/null
for i in $(seq "$N"); do handshake "h$i.intercept.test"; done >"$WORK/first.txt"
for i in $(seq "$N"); do handshake "h$i.intercept.test"; done >"$WORK/cached.txt"
echo "gateway: $BIN"
echo "first connection to a host (mint leaf + context + handshake): $(median <"$WORK/first.txt")"
echo "later connection, leaf cached (handshake only):               $(median <"$WORK/cached.txt")"
# The gateway's own timing of mint + NIOSSLContext (debug log line per minted leaf).
grep 'minted an interception certificate' "$WORK/gateway.log" | grep -o 'ms=[0-9.]*' | cut -d= -f2 |
    { echo -n "in the gateway: mint leaf + make its TLS context: "; median; }
