#!/usr/bin/env bash
# CPU per request of several proxies measured side by side: every proxy is up
# at once (each on its own ports, all on CPU 1), and short wrk runs (wrk -t1
# -c50, 1 KiB, on CPU 0 with the nginx origin) go to each in turn, round after
# round. Runs seconds apart see the same host, so the per-round ratios hold
# where scripts/bench.sh's groups, a minute apart, drift with a busy host.
#
# Usage: scripts/bench/interleaved.sh [--rounds N] [--seconds S] [--app-head] BIN:CONFIG ...
#   BIN     a gateway release binary, or `haproxy` (its CONFIG is ignored)
#   CONFIG  a gateway config template in scripts/bench/templates (gateway.yaml,
#           gateway-otel.yaml, gateway-policies.yaml, ...), at log_level warning;
#           CONFIG@LEVEL for another level (gateway.yaml@info)
#   --app-head  the ten-field head of a mobile app (absolute-app.lua), not wrk's bare one
# Each round runs them in turn, starting one later than the round before.
# Prints a line per run, then each pair's median CPU µs per request (user and
# kernel) and req/s and, for every pair after the first, the median of its
# per-round ratios to the first.
# Example: scripts/bench/interleaved.sh .build-static/release/gateway:gateway.yaml \
#              .build-static/release/gateway:gateway-otel.yaml haproxy:-
set -Eeuo pipefail

ROUNDS=10 SECONDS_PER_RUN=2 LUA=absolute.lua
while [[ $# -gt 0 ]]; do
    case $1 in
        --rounds) ROUNDS=$2; shift 2 ;;
        --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
        --app-head) LUA=absolute-app.lua; shift ;;
        -h|--help) sed -n '2,/^set -Eeuo/{/^set -Eeuo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) break ;;
    esac
done
[[ $# -gt 0 ]] || { echo "usage: $0 [--rounds N] [--seconds S] [--app-head] BIN:CONFIG ..." >&2; exit 2; }
for tool in nginx wrk taskset python3; do command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }; done

HERE=$(cd "$(dirname "$0")" && pwd)
TEMPLATES=$HERE/templates
# shellcheck source=interleaved_lib.sh
source "$HERE/interleaved_lib.sh"
interleaved_setup interleaved origin.pid

read -r -a PORTS < <(python3 "$HERE/freeports.py" $((2 + 2 * $#)))
ORIGIN_PORT=${PORTS[0]} SINK_PORT=${PORTS[1]}
mkdir -p "$WORK/htdocs" "$WORK/origin-tmp" "$WORK/gateway-state"
head -c 1024 /dev/urandom >"$WORK/htdocs/1k"
# mktemp -d makes WORK 0700: nginx's worker (another user) could not reach
# htdocs and answered 403, a different load from the bench's 1 KiB GET.
chmod a+rx "$WORK"
chmod -R a+rX "$WORK/htdocs"
render "$TEMPLATES/origin-nginx.conf" "$WORK/origin.conf" DIR="$WORK" ORIGIN_PORT="$ORIGIN_PORT"
taskset -c 0 nginx -c "$WORK/origin.conf" >"$WORK/origin.log" 2>&1 &
taskset -c 0 python3 "$HERE/otlp_sink.py" "$SINK_PORT" >"$WORK/sink.log" 2>&1 &
PIDS+=($!)
render "$TEMPLATES/$LUA" "$WORK/load.lua" HOST="127.0.0.1:$ORIGIN_PORT" FILE=1k

NAMES=() PROXY_PORTS=() PROXY_PIDS=()
i=0
for pair in "$@"; do
    bin=${pair%%:*} config=${pair#*:} level=warning
    if [[ $config == *@* ]]; then level=${config#*@} config=${config%@*}; fi
    port=${PORTS[$((2 + 2 * i))]} admin=${PORTS[$((3 + 2 * i))]}
    vars=(DIR="$WORK/p$i" PROXY_PORT="$port" ADMIN_PORT="$admin" ORIGIN_PORT="$ORIGIN_PORT" SINK_PORT="$SINK_PORT" LOG_LEVEL="$level")
    mkdir -p "$WORK/p$i"
    if [[ $bin == haproxy ]]; then
        render "$TEMPLATES/haproxy.cfg" "$WORK/p$i/haproxy.cfg" "${vars[@]}"
        taskset -c 1 haproxy -db -f "$WORK/p$i/haproxy.cfg" >"$WORK/p$i/log" 2>&1 &
    else
        render "$TEMPLATES/$config" "$WORK/p$i/gateway.yaml" "${vars[@]}"
        taskset -c 1 "$bin" run --config "$WORK/p$i/gateway.yaml" >"$WORK/p$i/log" 2>&1 &
    fi
    interleaved_started $! "$port" "$pair"
    i=$((i + 1))
done
sleep 2
for port in "${PROXY_PORTS[@]}"; do # warm each up (and check it answers)
    taskset -c 0 wrk -t1 -c50 -d1s -s "$WORK/load.lua" "http://127.0.0.1:$port" >/dev/null
done

interleaved_rounds interleaved_wrk_run

interleaved_summary "$WORK/runs.txt" "${NAMES[@]}"
