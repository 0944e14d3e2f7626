#!/usr/bin/env bash
# The intercepted-HTTP/2 row of scripts/bench.sh (H2ProxyLoad, 10 connections x 50
# streams, 1 KiB GETs) measured side by side, as interleaved.sh does for HTTP/1.1:
# every proxy is up at once (each on its own ports, all on CPU 1), and short runs go
# to each in turn, round after round. On this kind of host a proxy's CPU per request
# moved by up to 1.4x between runs a minute apart (the gateway's own kernel time as
# much as its user time: the machine, not the code), so two binaries are compared by
# the median of their per-round ratios, not by one run each.
#
# Usage: scripts/bench/interleaved_h2.sh [--rounds N] [--seconds S] BIN ...
#   BIN  a gateway release binary (its interception of the TLS origin, HTTP/2 both
#        sides, scripts/bench/templates/h2-gateway-intercept.yaml), or `haproxy`
#        (TLS-terminating h2 reverse proxy, h2-haproxy-tls.cfg)
# Each round runs them in turn, starting one later than the round before. Prints a
# line per run, then each one's median CPU µs per request (user and kernel) and, for
# every one after the first, the median of its per-round ratio to the first.
# Needs nginx, openssl, haproxy (for `haproxy`), and H2ProxyLoad (built by bench.sh,
# or BENCH_H2_BIN).
# Example: scripts/bench/interleaved_h2.sh --rounds 8 /tmp/gw-old .build-static/release/gateway haproxy
set -Eeuo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=interleaved_lib.sh
source "$HERE/interleaved_lib.sh"
ROUNDS=6 SECONDS_PER_RUN=3
interleaved_options "BIN ..." "$@"
set -- "${ARGS[@]}"
TEMPLATES=$HERE/templates
H2_BIN=${BENCH_H2_BIN:-$HERE/../../Benchmarks/.build-bench/release/H2ProxyLoad}
H2_HOST=h2.bench.test
for tool in nginx openssl taskset python3 "$H2_BIN"; do command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }; done

interleaved_setup interleaved-h2 origin-tls.pid

interleaved_tls_origin $#  # the bench PKI in WORK/tls, the TLS origin on PORTS[0], two ports a proxy from PORTS[4]

NAMES=() PROXY_PORTS=() PROXY_PIDS=() CLIENTS=()
i=0
for bin in "$@"; do
    port=${PORTS[$((4 + 2 * i))]} admin=${PORTS[$((5 + 2 * i))]} dir=$WORK/p$i
    mkdir -p "$dir/gateway-state"
    ln -s "$WORK/tls" "$dir/tls"
    vars=(DIR="$dir" PROXY_PORT="$port" ADMIN_PORT="$admin" TLS_ORIGIN_PORT="${PORTS[0]}" H2_HOST="$H2_HOST")
    if [[ $bin == haproxy ]]; then
        render "$TEMPLATES/h2-haproxy-tls.cfg" "$dir/haproxy.cfg" "${vars[@]}"
        taskset -c 1 haproxy -db -f "$dir/haproxy.cfg" >"$dir/log" 2>&1 &
        CLIENTS+=("--direct --target 127.0.0.1:$port --ca $WORK/tls/ca.pem")
    else
        render "$TEMPLATES/h2-gateway-intercept.yaml" "$dir/gateway.yaml" "${vars[@]}"
        "$bin" ca export --config "$dir/gateway.yaml" >"$dir/gateway-ca.pem" 2>"$dir/ca.err" ||
            { echo "$bin ca export: $(cat "$dir/ca.err")" >&2; exit 1; }
        taskset -c 1 "$bin" run --config "$dir/gateway.yaml" >"$dir/log" 2>&1 &
        CLIENTS+=("--proxy 127.0.0.1:$port --target $H2_HOST:443 --ca $dir/gateway-ca.pem")
    fi
    interleaved_started $! "$port" "$bin#$i"
    i=$((i + 1))
done
sleep 2

# load J SECONDS: one H2ProxyLoad run through proxy J; its JSON report's requests and errors.
load() {
    # shellcheck disable=SC2086  # CLIENTS[j] is a word list
    taskset -c 0 "$H2_BIN" ${CLIENTS[$1]} --path /1k --connections 10 --streams 50 --seconds "$2" 2>"$WORK/load.err" | tail -n 1 |
        python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(r["requests"], r["non2xx"] + sum(dict(r["errors"]).values()))'
}
for j in "${!PROXY_PIDS[@]}"; do # warm each up (and check it answers)
    read -r requests bad < <(load "$j" 1) || { echo "${NAMES[$j]}: no report ($(tail -n 2 "$WORK/load.err"))" >&2; exit 1; }
    [[ $requests -gt 0 && $bad -eq 0 ]] || { echo "${NAMES[$j]}: warm-up got $requests requests, $bad failed" >&2; exit 1; }
done

# h2_run J: one H2ProxyLoad run through proxy J; its request count, every response a 200.
h2_run() {
    local requests bad
    read -r requests bad < <(load "$1" "$SECONDS_PER_RUN") || { echo "no report ($(tail -n 2 "$WORK/load.err"))" >&2; return 1; }
    if [[ $bad -ne 0 || $requests -eq 0 ]]; then
        echo "$requests requests, $bad not 200" >&2
        return 1
    fi
    echo "$requests"
}
interleaved_rounds h2_run

interleaved_summary "$WORK/runs.txt" "${NAMES[@]}"
