#!/usr/bin/env bash
# Soak test (issue 15): the gateway under moderate load for SOAK_MINUTES (default 30)
# against an origin that randomly resets, stalls, cuts bodies short and answers
# 429/503 (scripts/soak/flaky_upstream.py), with retries, a rate limit and a
# bearer on its upstream. Samples the gateway's RSS and open file descriptors
# every SOAK_SAMPLE seconds (default 10) and prints the first, last and largest:
# both should end flat. Needs wrk and python3; builds nothing (SOAK_GATEWAY_BIN,
# default .build/release/gateway: `swift build -c release` first).
#
#   scripts/soak.sh                 # 30 minutes
#   SOAK_MINUTES=5 scripts/soak.sh  # a short check
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MINUTES=${SOAK_MINUTES:-30}
SAMPLE=${SOAK_SAMPLE:-10}
BIN=${SOAK_GATEWAY_BIN:-$ROOT/.build/release/gateway}
WORK=$(mktemp -d /tmp/gateway-soak.XXXXXX)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

command -v wrk >/dev/null || { echo "soak.sh: wrk is needed (apt-get install wrk)" >&2; exit 2; }
[[ -x "$BIN" ]] || { echo "soak.sh: no gateway binary at $BIN (swift build -c release)" >&2; exit 2; }
read -r ORIGIN PROXY ADMIN < <(python3 "$ROOT/scripts/bench/freeports.py" 3)

python3 "$ROOT/scripts/soak/flaky_upstream.py" "$ORIGIN" >"$WORK/origin.log" 2>&1 &
PIDS+=($!)
cat >"$WORK/gateway.yaml" <<YAML
listen:
  proxy: 127.0.0.1:$PROXY
  admin: 127.0.0.1:$ADMIN
log_level: warning
state_dir: $WORK/state
pool:
  request_timeout: 1s
upstreams:
  - name: flaky
    hosts: ["127.0.0.1"]
    origin: http://127.0.0.1:$ORIGIN
    auth: { type: bearer, token: soak-token-not-a-secret }
    retry: { attempts: 3, on: [connect-failure, reset, timeout, 503] }
    rate_limit: { requests_per_second: 2000, burst: 200, max_wait: 2s }
YAML
"$BIN" run --config "$WORK/gateway.yaml" >"$WORK/gateway.log" 2>&1 &
GATEWAY=$!
PIDS+=($GATEWAY)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$ADMIN/healthz" && break; sleep 0.2; done

echo "local req = wrk.format('GET', 'http://127.0.0.1:$ORIGIN/soak', {Host='127.0.0.1:$ORIGIN'}); request = function() return req end" >"$WORK/soak.lua"
echo "==> soak for $MINUTES min: gateway pid $GATEWAY, origin :$ORIGIN, samples every ${SAMPLE}s in $WORK/samples.csv" >&2
wrk -t1 -c16 -d"${MINUTES}m" --timeout 10s -s "$WORK/soak.lua" "http://127.0.0.1:$PROXY/" >"$WORK/wrk.txt" 2>&1 &
LOAD=$!
PIDS+=($LOAD)
echo "seconds,rss_kib,fds" >"$WORK/samples.csv"
start=$SECONDS
while kill -0 "$LOAD" 2>/dev/null; do
    rss=$(awk '/VmRSS/{print $2}' "/proc/$GATEWAY/status")
    fds=$(ls "/proc/$GATEWAY/fd" | wc -l)
    echo "$((SECONDS - start)),$rss,$fds" >>"$WORK/samples.csv"
    sleep "$SAMPLE"
done
kill -0 "$GATEWAY" || { echo "soak.sh: the gateway died" >&2; exit 1; }
sleep 3  # let pooled connections settle
rss=$(awk '/VmRSS/{print $2}' "/proc/$GATEWAY/status"); fds=$(ls "/proc/$GATEWAY/fd" | wc -l)
echo "$((SECONDS - start)),$rss,$fds" >>"$WORK/samples.csv"

grep -E "requests in|Non-2xx|Socket errors|Requests/sec" "$WORK/wrk.txt" || true
python3 - "$WORK/samples.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
first, last = rows[0], rows[-1]
quarter = rows[: max(1, len(rows) // 4)]
print(f"samples: {len(rows)}")
print(f"RSS MiB: first {int(first['rss_kib'])/1024:.1f}, max in first quarter {max(int(r['rss_kib']) for r in quarter)/1024:.1f}, "
      f"max {max(int(r['rss_kib']) for r in rows)/1024:.1f}, last {int(last['rss_kib'])/1024:.1f}")
print(f"open fds: first {first['fds']}, max {max(int(r['fds']) for r in rows)}, last {last['fds']}")
PY
curl -s "http://127.0.0.1:$ADMIN/metrics" | grep -E "^gateway_(retries_total|rate_limited_total|request_errors_total)" | awk '{s[$1]+=$2} END {for (k in s) print k, s[k]}' | sort | head -20
cleanup
trap - EXIT
cat "$WORK/origin.log"
echo "==> files in $WORK" >&2
