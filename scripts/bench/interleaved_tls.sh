#!/usr/bin/env bash
# The TLS-upstream rows of scripts/bench.sh (wrk HTTP/1.1, -t1 -c50, 1 KiB GETs for
# origin.bench.test, through the proxy to the nginx TLS origin over HTTP/2 or HTTP/1.1)
# measured side by side, as interleaved.sh does for plain HTTP/1.1: every proxy is up at
# once (each on its own ports, all on CPU 1), and short wrk runs go to each in turn, round
# after round; two proxies are compared by the median of their per-round ratios. On this
# kind of host one bench.sh run read the same binary's h2-upstream row at 38.8 and at 53.6
# µs per request, every component alike: the machine, not the code.
#
# Usage: scripts/bench/interleaved_tls.sh [--rounds N] [--seconds S] BIN:VERSION ...
#   BIN      a gateway release binary (h2-gateway-upstream.yaml), or `haproxy`
#            (h2-haproxy-upstream.cfg, connections reused)
#   VERSION  h2 or h1: what the proxy speaks to the TLS origin (the gateway's
#            http_version http2 or http1, HAProxy's alpn h2 or http/1.1)
# Each round runs them in turn, starting one later than the round before. Prints a line
# per run, then each one's median CPU µs per request (user and kernel) and req/s and, for
# every one after the first, the median of its per-round ratios to the first.
# Needs nginx, openssl, wrk, haproxy (for `haproxy`).
# Example: scripts/bench/interleaved_tls.sh --rounds 8 .build-static/release/gateway:h1 \
#              .build-static/release/gateway:h2 haproxy:h1 haproxy:h2
set -Eeuo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=interleaved_lib.sh
source "$HERE/interleaved_lib.sh"
ROUNDS=8 SECONDS_PER_RUN=2
interleaved_options "BIN:VERSION ..." "$@"
set -- "${ARGS[@]}"
TEMPLATES=$HERE/templates
H2_HOST=h2.bench.test UPSTREAM_HOST=origin.bench.test

interleaved_setup interleaved-tls origin-tls.pid
interleaved_tls_origin $#  # the bench PKI in WORK/tls, the TLS origin on PORTS[0], two ports a proxy from PORTS[4]
render "$TEMPLATES/absolute.lua" "$WORK/load.lua" HOST="$UPSTREAM_HOST" FILE=1k

NAMES=() PROXY_PORTS=() PROXY_PIDS=()
i=0
for pair in "$@"; do
    bin=${pair%%:*} version=${pair#*:}
    [[ $version == h1 || $version == h2 ]] || { echo "$pair: VERSION is h1 or h2" >&2; exit 2; }
    port=${PORTS[$((4 + 2 * i))]} admin=${PORTS[$((5 + 2 * i))]} dir=$WORK/p$i
    mkdir -p "$dir/gateway-state"
    ln -s "$WORK/tls" "$dir/tls"
    vars=(DIR="$dir" PROXY_PORT="$port" ADMIN_PORT="$admin" TLS_ORIGIN_PORT="${PORTS[0]}" ORIGIN_TLS_PORT="${PORTS[0]}"
        UPSTREAM_HOST="$UPSTREAM_HOST" SERVER_OPTIONS="")
    if [[ $bin == haproxy ]]; then
        alpn=h2; [[ $version == h1 ]] && alpn=http/1.1
        render "$TEMPLATES/h2-haproxy-upstream.cfg" "$dir/haproxy.cfg" "${vars[@]}" ALPN="$alpn"
        taskset -c 1 haproxy -db -f "$dir/haproxy.cfg" >"$dir/log" 2>&1 &
    else
        http=http2; [[ $version == h1 ]] && http=http1
        render "$TEMPLATES/h2-gateway-upstream.yaml" "$dir/gateway.yaml" "${vars[@]}" HTTP_VERSION="$http" \
            CLIENT_CERTIFICATE="# no client certificate"
        taskset -c 1 "$bin" run --config "$dir/gateway.yaml" >"$dir/log" 2>&1 &
    fi
    interleaved_started $! "$port" "$pair#$i"
    i=$((i + 1))
done
sleep 2

for j in "${!PROXY_PIDS[@]}"; do # warm each up (and check it answers)
    interleaved_wrk_run "$j" 1 >/dev/null || { echo "${NAMES[$j]}: warm-up failed ($(tail -n 2 "$WORK/p$j/log"))" >&2; exit 1; }
done
interleaved_rounds interleaved_wrk_run

interleaved_summary "$WORK/runs.txt" "${NAMES[@]}"
