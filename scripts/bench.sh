#!/usr/bin/env bash
# Benchmark the gateway against a direct connection and peer proxies (issue 9).
#
#   scripts/bench.sh            # full run: BENCH_SECONDS (10) per run, BENCH_REPEAT (1) runs per figure
#   scripts/bench.sh --quick    # 3 s per run
#   BENCH_SECONDS=10 BENCH_REPEAT=2 scripts/bench.sh
#
# Installs nginx, wrk, squid, tinyproxy, haproxy (apt-get) and mitmproxy (pip, in a venv
# under ~/.cache/gateway-bench), builds the gateway as the Dockerfile does (release, --static-swift-stdlib), starts an nginx origin on
# 127.0.0.1 and measures each path with wrk. Prints one markdown table and writes it to
# scripts/bench-results.md, then a summary from the same run (also at the top of that file,
# with each proxy's user-space and kernel CPU per request): the gateway's CPU per request
# divided by HAProxy's for the default config, the typical policies (gateway-policies) and
# debug traces (gateway-traces), and typical / default and traces / default; and the
# config-size rows (issue 40): 500 upstreams with the request for the last by exact host and
# by *.suffix, and one upstream with 2,000 deny rules, each against one upstream in the same
# run (scripts/bench/config_size.py writes their configs at bench time). Everything runs
# on 127.0.0.1 on free ports; every process it starts is stopped on exit. Run as root on
# Debian (or with everything already installed). Allocations per request: scripts/allocs.sh.
#
# Options:
#   --quick            3 s per run (unless BENCH_SECONDS is set)
#   --only LIST        comma-separated subset of: direct,gateway,config-size,nio-floor,nio-byte-floor,nginx-fp,haproxy,squid,
#                      tinyproxy,mitmdump (direct and haproxy are always kept: the ratios need them)
#                      config-size: the gateway-size-* rows (one upstream, 500 upstreams by exact host and
#                      by *.suffix, 2,000 deny rules), their runs alternating; also run with gateway
#                      nio-floor: Benchmarks/Benchmarks/NIOProxyFloor, the least a forward proxy on
#                      SwiftNIO's HTTP/1 codec can do (built in release under Benchmarks/.build-bench)
#                      nio-byte-floor: Benchmarks/Benchmarks/NIOByteFloor, the same on SwiftNIO's channels
#                      moving ByteBuffers, with no HTTP codec (the floor of a gateway framing HTTP/1 itself)
#                      http2: the HTTP/2 rows (issue 37), only when listed (not in the default run: the load
#                      client's build compiles BoringSSL and NIOHTTP2; `--only http2` alone runs these and the
#                      tls-handshake and websocket rows below, nothing else):
#                      H2ProxyLoad (Benchmarks/Benchmarks/H2ProxyLoad, built in release under Benchmarks/.build-bench)
#                      through the gateway's interception (CONNECT, TLS, h2) vs HAProxy as a TLS-terminating h2
#                      reverse proxy (it cannot intercept CONNECT; the client connects to it directly) and the
#                      TLS origin direct; then wrk (HTTP/1.1, 50 conns) through the gateway and HAProxy to the
#                      TLS origin over h2 and over HTTP/1.1, each also with a client certificate configured
#                      (gateway-up-*-mtls: the origin's port with ssl_verify_client on). Origin: nginx with TLS
#                      and HTTP/2, a throwaway CA, leaf and client certificate made by openssl. Results in a
#                      section of their own.
#                      h2-intercept: only the H2ProxyLoad rows of http2 (interception vs HAProxy terminating
#                      TLS + h2, and direct)
#                      h2-upstream: only the wrk rows to the TLS origin of http2 (with and without a client
#                      certificate, gateway and HAProxy), without H2ProxyLoad (no Benchmarks/ build)
#                      tls-handshake: the TLS handshake rows (issue 57; also run with http2), no Benchmarks/
#                      build: (a) new intercepted connections, each a CONNECT through the gateway, a full TLS
#                      handshake with its interception (the leaf minted once, then cached), one GET of /1k and
#                      close, against HAProxy terminating TLS (a new connection, the handshake, one GET, close)
#                      and the TLS origin direct; load client scripts/bench/tls_connect_load.py (CPython's ssl:
#                      OpenSSL), BENCH_TLS_LOADS connections in flight; connections/s and the proxy's CPU per
#                      connection. (b) new upstream TLS connections: wrk (HTTP/1.1, keep-alive) through the
#                      gateway (http_version http1) and HAProxy to the TLS origin's port that closes every
#                      connection after its response (keepalive_timeout 0), so each request opens and
#                      verifies a new upstream TLS connection; HAProxy as it ships (it resumes its last TLS
#                      session with the server) and with no-ssl-reuse (a full handshake each time); the
#                      origin logs which handshakes were resumed
#                      websocket: the WebSocket rows (issue 57; also run with http2): scripts/bench/ws_load.py
#                      sends binary messages (BENCH_WS_LOADS: 1 KiB and 1 MiB) for BENCH_SECONDS to
#                      scripts/bench/ws_sink.py, which counts them, directly and through the gateway and
#                      HAProxy as HTTP proxies (an absolute-form `GET http://...` with `Upgrade: websocket`,
#                      then the tunnel), runs alternating, the sink on CPU 0 with the client; then direct
#                      with the sink on CPU 1; messages/s, MB/s, the proxy's CPU per message
#                      Each of http2, tls-handshake and websocket has a section of its own in the results, and
#                      every ratio of theirs (gateway ÷ HAProxy, ÷ direct; each proxy's CPU per request with
#                      its user-space and kernel parts) is in the summary
#   --skip-install     do not run apt-get / pip
#   --no-build         use the existing .build-static/release/gateway
#   --no-extras        skip the gateway memory checks (1,000 connections, 1 GiB stream)
#   -h, --help
#
# Environment:
#   BENCH_SECONDS      seconds per wrk run (default 10, 3 with --quick)
#   BENCH_REPEAT       runs per figure (default 1; 2 for figures to publish)
#   BENCH_MITM_SECONDS seconds per mitmdump run (default 5, 2 with --quick)
#   BENCH_WARMUP       seconds of unmeasured load before the first run of each load, as the
#                      issues measure (default 2, 0 with --quick; mitmdump is not warmed up)
#   BENCH_IDLE_WAIT    before each run, wait up to this many seconds for a quiet machine
#                      (< 10% of a core busy; default 60, 0 with --quick)
#   BENCH_BUILD_WAIT   wait up to this many seconds for other swift builds before building (default 1800)
#   BENCH_OUT          results file (default scripts/bench-results.md)
#   BENCH_CACHE        where the mitmproxy venv lives (default ~/.cache/gateway-bench)
#   BENCH_GATEWAY_BIN  gateway binary to measure (implies --no-build)
#   BENCH_LOADS        the loads, "BODY CONNS" separated by ";" (default "1k 50;100k 50;1k 1;1k-app 50");
#                      BODY 1k or 100k, wrk's bare head; 1k-app, the head of a mobile app's request
#                      (10 fields, ~560 bytes: templates/absolute-app.lua)
#   BENCH_SIZE_LOADS   the loads of the config-size rows (default "1k 50;1k-app 50")
#   BENCH_H2_LOADS     the HTTP/2 interception rows' loads, "CONNS STREAMS" separated by ";" (default "10 50":
#                      10 client connections with 50 streams each busy, 500 requests in flight)
#   BENCH_H2_UPSTREAM_LOADS  the h2-vs-HTTP/1.1-upstream rows' wrk loads, "BODY CONNS" (default "1k 50")
#   BENCH_H2_BIN       the H2ProxyLoad binary (default Benchmarks/.build-bench/release/H2ProxyLoad, built
#                      unless it exists and the gateway is not built either)
#   BENCH_TLS_LOADS    the new-intercepted-connection rows' loads: connections in flight, separated by ";"
#                      (default "16")
#   BENCH_TLS_UPSTREAM_LOADS  the new-upstream-connection rows' wrk loads, "BODY CONNS" (default "1k 50")
#   BENCH_WS_LOADS     the WebSocket rows' loads, "SIZE CONNS" separated by ";", SIZE 1k or 1m (or a
#                      number of bytes), CONNS WebSockets sending at once (default "1k 1;1m 1")
#   BENCH_PERF         1: profile each gateway and HAProxy run (perf record -g at 999 Hz on the
#                      proxy's pid); where each run's CPU went (scripts/bench/perf_summary.py: by
#                      component, in µs per request) goes to perf-NAME-LOAD.txt beside the results
#                      file; the CPU figures of those runs include perf's sampling cost (BENCH_PERF_KEEP=1
#                      keeps each perf-NAME-LOAD.data beside it, for `perf report`; BENCH_PERF_EVENT=EVENT
#                      records every hit of EVENT instead, e.g. syscalls:sys_enter_mprotect;
#                      BENCH_PERF_CALLGRAPH=dwarf unwinds with DWARF, which names the direct callers
#                      of leaves such as swift_retain that frame pointers skip: dearer, larger files)
#   BENCH_MALLOCS      1: count each gateway and HAProxy run's calls to glibc's malloc (a perf uprobe
#                      on libc, `perf stat -e probe_libc:malloc -p PID`), reported per request in
#                      mallocs-NAME-LOAD.txt beside the results file and in the row's record. A probe
#                      hit costs microseconds: such runs' CPU and throughput figures mean nothing, their
#                      counts do (run with BENCH_WARMUP=0: the count spans the whole run).
#                      sites: record each malloc's stack instead (perf record -g) and write where they
#                      come from, per request, to mallocs-NAME-LOAD.txt (scripts/bench/malloc_sites.py;
#                      BENCH_MALLOCS_KEEP=1 keeps the perf data beside it, for malloc_sites.py --depth N)
#   BENCH_SYSCALLS     1: count each gateway and HAProxy run's system calls by kind (perf stat on the
#                      syscalls:sys_enter_* tracepoints of the socket and poll calls), per request, in
#                      syscalls-NAME-LOAD.txt beside the results file (BENCH_WARMUP=0: the whole run)
#
# Extra gateway variants: every scripts/bench/templates/gateway-NAME.yaml is measured too
# (as "gateway-NAME", log_level from the template), e.g. a typical config with policies on;
# gateway-otel traces at sampling 1.0 to a local OTLP sink (scripts/bench/otlp_sink.py, started
# with it), reported against the default config (issue 38), with any span it dropped noted; its
# runs and gateway-policies' alternate with the default gateway's and HAProxy's, so that their
# ratios are of the same rounds.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HELPERS="$ROOT/scripts/bench"
TEMPLATES="$HELPERS/templates"
ORIGINAL_COMMAND="scripts/bench.sh${*:+ $*}"

QUICK=0 SKIP_INSTALL=0 NO_BUILD=0 NO_EXTRAS=0 ONLY=""
while (($#)); do
    case "$1" in
        --quick) QUICK=1 ;;
        --only) ONLY="${2:?--only needs a list}"; shift ;;
        --only=*) ONLY="${1#--only=}" ;;
        --skip-install) SKIP_INSTALL=1 ;;
        --no-build) NO_BUILD=1 ;;
        --no-extras) NO_EXTRAS=1 ;;
        -h|--help) sed -n '2,/^set -Eeuo/{/^set -Eeuo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if ((QUICK)); then
    RUN_SECONDS=${BENCH_SECONDS:-3}; MITM_SECONDS=${BENCH_MITM_SECONDS:-2}; IDLE_WAIT=${BENCH_IDLE_WAIT:-0}; WARMUP=${BENCH_WARMUP:-0}
else
    RUN_SECONDS=${BENCH_SECONDS:-10}; MITM_SECONDS=${BENCH_MITM_SECONDS:-5}; IDLE_WAIT=${BENCH_IDLE_WAIT:-60}; WARMUP=${BENCH_WARMUP:-2}
fi
REPEAT=${BENCH_REPEAT:-1}
BUILD_WAIT=${BENCH_BUILD_WAIT:-1800}
OUT=${BENCH_OUT:-$ROOT/scripts/bench-results.md}
mkdir -p "$(dirname "$OUT")"
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gateway-bench}
# The build the Dockerfile ships: release, Swift runtime linked in (--static-swift-stdlib).
STATIC_SCRATCH="$ROOT/.build-static"
GATEWAY_BIN=${BENCH_GATEWAY_BIN:-$STATIC_SCRATCH/release/gateway}
FLOOR_BIN="$ROOT/Benchmarks/.build-bench/release/NIOProxyFloor"
BYTE_FLOOR_BIN="$ROOT/Benchmarks/.build-bench/release/NIOByteFloor"
[[ -n "${BENCH_GATEWAY_BIN:-}" ]] && NO_BUILD=1
LOADS_TEXT=${BENCH_LOADS:-1k 50;100k 50;1k 1;1k-app 50}
IFS=';' read -r -a LOADS <<<"$LOADS_TEXT"
SIZE_LOADS_TEXT=${BENCH_SIZE_LOADS:-1k 50;1k-app 50}
# The config-size rows: config_size.py's variants, one upstream first (the others' baseline).
SIZE_VARIANTS=(gateway-size-1 gateway-size-500-exact gateway-size-500-suffix gateway-size-2000-deny gateway-size-1-faults-idle)
# The HTTP/2 rows (issue 37): their load client, loads, and the names their requests carry
# (nothing resolves them: the gateway's upstreams send them to the TLS origin).
H2_BIN=${BENCH_H2_BIN:-$ROOT/Benchmarks/.build-bench/release/H2ProxyLoad}
H2_LOADS_TEXT=${BENCH_H2_LOADS:-10 50}
H2_UPSTREAM_LOADS_TEXT=${BENCH_H2_UPSTREAM_LOADS:-1k 50}
# The TLS handshake and WebSocket rows (issue 57).
TLS_LOADS_TEXT=${BENCH_TLS_LOADS:-16}
TLS_UPSTREAM_LOADS_TEXT=${BENCH_TLS_UPSTREAM_LOADS:-1k 50}
WS_LOADS_TEXT=${BENCH_WS_LOADS:-1k 1;1m 1}
H2_HOST=h2.bench.test          # the intercepted host: CONNECT target, SNI, the minted leaf's name
UPSTREAM_HOST=origin.bench.test  # the host of wrk's requests in the h2-vs-HTTP/1.1-upstream rows
export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the tree

log() { printf '==> %s\n' "$*" >&2; }
PERF=${BENCH_PERF:-0}
MALLOCS=${BENCH_MALLOCS:-0}
SYSCALLS=${BENCH_SYSCALLS:-0}
WORK=$(mktemp -d /tmp/gateway-bench.XXXXXX)
chmod 755 "$WORK"   # squid, tinyproxy and nginx workers drop privileges
note() { printf '%s\n' "$*" >>"$WORK/notes.txt"; log "note: $*"; }
# Where measure() appends its record and which origin it counts: runs.jsonl and the plain
# origin, except in the HTTP/2 rows (bench_http2), which point them at runs-h2.jsonl and
# the TLS origin (and sample the origin's open connections) while they run.
RUNS_FILE="$WORK/runs.jsonl" COUNT_ORIGIN_PID="" COUNT_ORIGIN_STATUS="" MEASURE_FLAGS=()
fail() { printf '%s\n' "$*" >>"$WORK/failures.txt"; printf '!!! FAIL: %s\n' "$*" >&2; }

# ---------------------------------------------------------------- processes
STARTED=()   # pids of every process this script started
descendants() { local p; for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$p"; descendants "$p"; done; }
stop_pid() { # stop_pid PID: a process this script started (and its descendants)
    local pid=$1 all i p rest=()
    for p in "${STARTED[@]}"; do [[ $p == "$pid" ]] || rest+=("$p"); done
    ((${#rest[@]} < ${#STARTED[@]})) || return 0   # not ours, or already stopped (its pid may be reused)
    STARTED=(${rest[@]+"${rest[@]}"})
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    all="$pid $(descendants "$pid" | tr '\n' ' ')"
    kill -TERM $all 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    for p in $all; do kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null; done
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$? i
    trap - EXIT INT TERM
    while ((${#STARTED[@]})); do stop_pid "${STARTED[${#STARTED[@]} - 1]}"; done
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# start_bg LOGFILE CMD...: runs CMD in the background; its pid is in $BG_PID.
start_bg() {
    local logfile=$1; shift
    "$@" >"$logfile" 2>&1 </dev/null &
    BG_PID=$!
    STARTED+=("$BG_PID")
}
pin_tree() { # pin_tree CPU PID: moves PID, its threads and its descendants to CPU
    local cpu=$1 p
    for p in "$2" $(descendants "$2"); do taskset -a -p -c "$cpu" "$p" >/dev/null; done; }
render() { # render TEMPLATE OUT key=value...
    local template=$1 out=$2 expr=() kv; shift 2
    for kv in "$@"; do expr+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
    sed "${expr[@]}" "$template" >"$out"
}
free_ports() { python3 "$HELPERS/freeports.py" "$1"; }

# ---------------------------------------------------------------- install
want() { [[ -z "$ONLY" || ",direct,haproxy,$ONLY," == *",$1,"* ]]; }
want_http2() { [[ ",$ONLY," == *",http2,"* ]]; }   # opt-in: never in the default run
want_h2_clients() { want_http2 || [[ ",$ONLY," == *",h2-intercept,"* ]]; }   # the H2ProxyLoad rows of http2 alone
want_h2_upstream() { want_http2 || [[ ",$ONLY," == *",h2-upstream,"* ]]; }   # the TLS-upstream rows of http2 alone
want_tls() { want_http2 || [[ ",$ONLY," == *",tls-handshake,"* ]]; }   # opt-in, as http2 (and with it)
want_ws() { want_http2 || [[ ",$ONLY," == *",websocket,"* ]]; }
want_tls_origin() { want_h2_clients || want_h2_upstream || want_tls; }   # the rows on the nginx TLS origin (bench_http2)
install_packages() {
    local missing=() cmd pkg
    for pair in nginx:nginx wrk:wrk squid:squid tinyproxy:tinyproxy haproxy:haproxy curl:curl taskset:util-linux \
        pgrep:procps python3:python3; do
        cmd=${pair%%:*} pkg=${pair#*:}
        command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if ((${#missing[@]})) && ((!SKIP_INSTALL)); then
        log "apt-get install ${missing[*]}"
        if [[ $(id -u) -ne 0 ]]; then echo "bench.sh: need root to install ${missing[*]}" >&2; exit 1; fi
        timeout 600 apt-get update -qq
        DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    export PATH="$PATH:/usr/sbin:/sbin"
    for cmd in nginx wrk curl taskset python3; do
        command -v "$cmd" >/dev/null || { echo "bench.sh: $cmd is required" >&2; exit 1; }
    done
}
MITMDUMP=""
install_mitmproxy() {
    want mitmdump || return 0
    if [[ -x "$CACHE/venv/bin/mitmdump" ]]; then MITMDUMP="$CACHE/venv/bin/mitmdump"; return 0; fi
    if ((SKIP_INSTALL)); then
        MITMDUMP=$(command -v mitmdump || true)
        [[ -n "$MITMDUMP" ]] || note "mitmdump skipped: not installed (--skip-install)"
        return 0
    fi
    log "pip install mitmproxy into $CACHE/venv"
    mkdir -p "$CACHE"
    if timeout 120 python3 -m venv "$CACHE/venv" >"$WORK/pip.log" 2>&1 &&
        timeout 900 "$CACHE/venv/bin/pip" install -q --timeout 60 mitmproxy >>"$WORK/pip.log" 2>&1 &&
        [[ -x "$CACHE/venv/bin/mitmdump" ]]; then
        MITMDUMP="$CACHE/venv/bin/mitmdump"
    else
        note "mitmdump skipped: pip install mitmproxy failed ($(tail -n 1 "$WORK/pip.log"))"
        rm -rf "$CACHE/venv"
    fi
}

# ---------------------------------------------------------------- build
wait_for_other_builds() { # wait_for_other_builds MAX_SECONDS
    local waited=0
    while pgrep -f swift-build >/dev/null 2>&1 && ((waited < $1)); do
        ((waited % 60 == 0)) && log "waiting for another swift build to finish ($waited s)"
        sleep 5; waited=$((waited + 5))
    done
}
build_gateway() {
    if ((NO_BUILD)); then
        [[ -x "$GATEWAY_BIN" ]] || { echo "bench.sh: $GATEWAY_BIN missing (drop --no-build)" >&2; exit 1; }
        return 0
    fi
    command -v swift >/dev/null || { echo "bench.sh: swift not found" >&2; exit 1; }
    wait_for_other_builds "$BUILD_WAIT"
    log "swift build -c release --product gateway --static-swift-stdlib --scratch-path .build-static"
    (cd "$ROOT" && timeout 3600 swift build -c release --product gateway --static-swift-stdlib \
        --scratch-path "$STATIC_SCRATCH" 2>&1 | tail -n 3) >&2
    [[ -x "$GATEWAY_BIN" ]] || { echo "bench.sh: release build failed" >&2; exit 1; }
}

# ---------------------------------------------------------------- origin
ORIGIN_PORT="" ORIGIN_PID=""
start_origin() {
    mkdir -p "$WORK/htdocs" "$WORK/origin-tmp"
    head -c 1024 /dev/urandom >"$WORK/htdocs/1k"
    head -c 102400 /dev/urandom >"$WORK/htdocs/100k"
    truncate -s 1G "$WORK/htdocs/1g"
    chmod -R a+rX "$WORK/htdocs"
    ORIGIN_PORT=$(free_ports 1)
    render "$TEMPLATES/origin-nginx.conf" "$WORK/origin.conf" DIR="$WORK" ORIGIN_PORT="$ORIGIN_PORT"
    start_bg "$WORK/origin.out" taskset -c 0 nginx -c "$WORK/origin.conf" -p "$WORK"
    ORIGIN_PID=$BG_PID
    local i
    for ((i = 0; i < 100; i++)); do
        curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/1k" && return 0
        kill -0 "$ORIGIN_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$WORK/origin.out" "$WORK/origin-error.log" >&2 2>/dev/null || true
    echo "bench.sh: nginx origin did not start" >&2; exit 1
}

# The floors: SwiftNIO's HTTP/1 codec on both sides and nothing else (NIOProxyFloor),
# and SwiftNIO's channels moving ByteBuffers with no codec (NIOByteFloor).
# build_floor PRODUCT BIN NAME
build_floor() {
    local product=$1 bin=$2 name=$3
    ((NO_BUILD)) && [[ -x "$bin" ]] && return 0
    wait_for_other_builds "$BUILD_WAIT"
    log "swift build -c release --product $product (Benchmarks/)"
    (cd "$ROOT/Benchmarks" && timeout 3600 swift build -c release --scratch-path .build-bench --product "$product" 2>&1 | tail -n 3) >&2 || true
    [[ -x "$bin" ]] || note "$name skipped: its build failed"
}

# ---------------------------------------------------------------- proxies
# start_proxy NAME: starts the proxy on CPU 1, sets PROXY_PID, PROXY_PORT and PROXY_ADMIN
# (and SINK_PID for gateway-otel's OTLP sink).
PROXY_PID="" PROXY_PORT="" PROXY_ADMIN="" SINK_PID="" GROUPED=()
start_proxy() {
    local name=$1 admin
    read -r PROXY_PORT admin < <(free_ports 2)
    PROXY_ADMIN=$admin
    local vars=(DIR="$WORK" PROXY_PORT="$PROXY_PORT" ADMIN_PORT="$admin" ORIGIN_PORT="$ORIGIN_PORT")
    case "$name" in
        gateway|gateway-log-info|gateway-ws)
            # gateway-ws: the WebSocket rows' gateway (the default config, its own logs and perf files).
            local level=warning; [[ $name == gateway-log-info ]] && level=info
            mkdir -p "$WORK/gateway-state"
            render "$TEMPLATES/gateway.yaml" "$WORK/$name.yaml" "${vars[@]}" LOG_LEVEL="$level"
            start_bg "$WORK/$name.log" taskset -c 1 "$GATEWAY_BIN" run --config "$WORK/$name.yaml"
            ;;
        gateway-size-*)
            mkdir -p "$WORK/gateway-state"
            python3 "$HELPERS/config_size.py" "${name#gateway-size-}" --proxy-port "$PROXY_PORT" --admin-port "$admin" \
                --origin-port "$ORIGIN_PORT" --dir "$WORK" --log-level warning >"$WORK/$name.yaml"
            start_bg "$WORK/$name.log" taskset -c 1 "$GATEWAY_BIN" run --config "$WORK/$name.yaml"
            ;;
        gateway-otel)
            # Tracing on: spans go to a local OTLP/HTTP sink (on the load CPU) that answers 200 and discards them.
            local sink
            sink=$(free_ports 1)
            start_bg "$WORK/otlp-sink.log" taskset -c 0 python3 "$HELPERS/otlp_sink.py" "$sink"
            SINK_PID=$BG_PID
            mkdir -p "$WORK/gateway-state"
            render "$TEMPLATES/$name.yaml" "$WORK/$name.yaml" "${vars[@]}" LOG_LEVEL=warning SINK_PORT="$sink"
            start_bg "$WORK/$name.log" taskset -c 1 "$GATEWAY_BIN" run --config "$WORK/$name.yaml"
            ;;
        gateway-intercept-h2|gateway-intercept-tls)
            # The HTTP/2 interception row (and the new-intercepted-connection row, the same config): the gateway's CA (in state_dir) is made and exported for the load client first.
            mkdir -p "$WORK/gateway-state"
            render "$TEMPLATES/h2-gateway-intercept.yaml" "$WORK/$name.yaml" "${vars[@]}" \
                TLS_ORIGIN_PORT="$TLS_ORIGIN_PORT" H2_HOST="$H2_HOST"
            "$GATEWAY_BIN" ca export --config "$WORK/$name.yaml" >"$WORK/gateway-ca.pem" 2>"$WORK/gateway-ca.err" ||
                fail "gateway ca export: $(tail -n 2 "$WORK/gateway-ca.err" | tr '\n' ' ')"
            start_bg "$WORK/$name.log" taskset -c 1 "$GATEWAY_BIN" run --config "$WORK/$name.yaml"
            ;;
        gateway-up-h2|gateway-up-h1|gateway-up-h2-mtls|gateway-up-h1-mtls|gateway-up-h1-new)
            # The h2-vs-HTTP/1.1-upstream rows: wrk's requests for UPSTREAM_HOST go to the TLS origin;
            # the -mtls ones to its port that requires a client certificate, which the gateway presents;
            # -new (the TLS handshake rows) to its port that closes each connection after a response.
            local version=http2 port=$TLS_ORIGIN_PORT client="# no client certificate"
            [[ $name == gateway-up-h1* ]] && version=http1
            [[ $name == *-mtls ]] && port=$TLS_MTLS_PORT \
                client="client_certificate: {certificate_file: $WORK/tls/client.pem, key_file: $WORK/tls/client-key.pem}"
            [[ $name == *-new ]] && port=$TLS_CLOSE_PORT
            mkdir -p "$WORK/gateway-state"
            render "$TEMPLATES/h2-gateway-upstream.yaml" "$WORK/$name.yaml" "${vars[@]}" \
                ORIGIN_TLS_PORT="$port" UPSTREAM_HOST="$UPSTREAM_HOST" HTTP_VERSION="$version" CLIENT_CERTIFICATE="$client"
            start_bg "$WORK/$name.log" taskset -c 1 "$GATEWAY_BIN" run --config "$WORK/$name.yaml"
            ;;
        gateway-*)
            mkdir -p "$WORK/gateway-state"
            render "$TEMPLATES/$name.yaml" "$WORK/$name.yaml" "${vars[@]}" LOG_LEVEL=warning
            start_bg "$WORK/$name.log" taskset -c 1 "$GATEWAY_BIN" run --config "$WORK/$name.yaml"
            ;;
        nio-floor)
            start_bg "$WORK/nio-floor.log" taskset -c 1 "$FLOOR_BIN" "$PROXY_PORT"
            ;;
        nio-byte-floor)
            start_bg "$WORK/nio-byte-floor.log" taskset -c 1 "$BYTE_FLOOR_BIN" "$PROXY_PORT"
            ;;
        nginx-fp)
            mkdir -p "$WORK/nginx-fp-tmp"
            render "$TEMPLATES/nginx-fp.conf" "$WORK/nginx-fp.conf" "${vars[@]}"
            start_bg "$WORK/nginx-fp.log" taskset -c 1 nginx -c "$WORK/nginx-fp.conf" -p "$WORK"
            ;;
        haproxy|haproxy-ws)
            render "$TEMPLATES/haproxy.cfg" "$WORK/$name.cfg" "${vars[@]}"
            start_bg "$WORK/$name.log" taskset -c 1 haproxy -db -f "$WORK/$name.cfg"
            ;;
        haproxy-tls-h2|haproxy-tls-term)
            # HAProxy's role in the HTTP/2 interception row: a TLS-terminating h2 reverse proxy (no CONNECT);
            # in the new-intercepted-connection row the same, reached over HTTP/1.1.
            render "$TEMPLATES/h2-haproxy-tls.cfg" "$WORK/$name.cfg" "${vars[@]}" TLS_ORIGIN_PORT="$TLS_ORIGIN_PORT"
            start_bg "$WORK/$name.log" taskset -c 1 haproxy -db -f "$WORK/$name.cfg"
            ;;
        haproxy-up-h2|haproxy-up-h1|haproxy-up-h1-new|haproxy-up-h1-new-noreuse)
            # -new: the TLS origin's port that closes each connection (the TLS handshake rows), HAProxy
            # resuming its TLS session with the server (its default) or not (-noreuse).
            local alpn=h2 port=$TLS_ORIGIN_PORT options=""
            [[ $name == haproxy-up-h1* ]] && alpn=http/1.1
            [[ $name == *-new* ]] && port=$TLS_CLOSE_PORT
            [[ $name == *-noreuse ]] && options=no-ssl-reuse
            render "$TEMPLATES/h2-haproxy-upstream.cfg" "$WORK/$name.cfg" "${vars[@]}" TLS_ORIGIN_PORT="$port" ALPN="$alpn" \
                SERVER_OPTIONS="$options"
            start_bg "$WORK/$name.log" taskset -c 1 haproxy -db -f "$WORK/$name.cfg"
            ;;
        squid)
            mkdir -p "$WORK/squid"; chown proxy:proxy "$WORK/squid" 2>/dev/null || chmod 777 "$WORK/squid"
            render "$TEMPLATES/squid.conf" "$WORK/squid.conf" "${vars[@]}"
            start_bg "$WORK/squid.log" taskset -c 1 squid -N -f "$WORK/squid.conf"
            ;;
        tinyproxy)
            mkdir -p "$WORK/tinyproxy"; chown nobody:nogroup "$WORK/tinyproxy" 2>/dev/null || chmod 777 "$WORK/tinyproxy"
            render "$TEMPLATES/tinyproxy.conf" "$WORK/tinyproxy.conf" "${vars[@]}"
            start_bg "$WORK/tinyproxy.log" taskset -c 1 tinyproxy -d -c "$WORK/tinyproxy.conf"
            ;;
        mitmdump)
            mkdir -p "$WORK/mitm"
            start_bg "$WORK/mitmdump.log" taskset -c 1 "$MITMDUMP" -q --listen-host 127.0.0.1 --listen-port "$PROXY_PORT" \
                --set confdir="$WORK/mitm"
            ;;
    esac
    PROXY_PID=$BG_PID
}
proxy_log() { ls "$WORK/$1".log 2>/dev/null || true; }

# request_host NAME: the host (and port) the load asks for through NAME: the origin's,
# except in the config-size rows, where it is a name that an upstream's origin: sends to
# the origin (config_size.py), and in the HTTP/2 upstream rows (UPSTREAM_HOST, which their
# gateway configs send to the TLS origin and their HAProxy sends to its one backend).
request_host() {
    case "$1" in
        gateway-size-*) python3 "$HELPERS/config_size.py" --request-host "${1#gateway-size-}" ;;
        gateway-up-*|haproxy-up-*) echo "$UPSTREAM_HOST" ;;
        *) echo "127.0.0.1:$ORIGIN_PORT" ;;
    esac
}

# fetch_check PROXYPORT FILE [HOST]: the body through the proxy is byte-identical to the origin's.
fetch_check() {
    local via=() got="$WORK/fetched" host=${3:-127.0.0.1:$ORIGIN_PORT}
    [[ -n "$1" ]] && via=(-x "http://127.0.0.1:$1")
    rm -f "$got"
    curl -sS --max-time 10 "${via[@]}" -o "$got" -w '%{http_code}' "http://$host/$2" >"$WORK/fetched.code" 2>"$WORK/fetched.err" &&
        [[ $(cat "$WORK/fetched.code") == 2* ]] && cmp -s "$got" "$WORK/htdocs/$2"
}
wait_ready() { # wait_ready NAME
    local i host
    host=$(request_host "$1")
    for ((i = 0; i < 300; i++)); do
        fetch_check "$PROXY_PORT" 1k "$host" && return 0
        kill -0 "$PROXY_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "$1 did not start or does not forward (last: HTTP $(cat "$WORK/fetched.code" 2>/dev/null) $(cat "$WORK/fetched.err" 2>/dev/null)); log: $(tail -n 5 "$(proxy_log "$1")" 2>/dev/null | tr '\n' ' ')"
    return 1
}

busy_ticks() { # busy jiffies of all CPUs (everything but idle and iowait), from /proc/stat
    local _cpu user nice system idle iowait irq softirq steal _rest
    read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
    echo $((user + nice + system + irq + softirq + steal))
}
wait_idle() {
    ((IDLE_WAIT > 0)) || return 0
    local waited=0
    while ((waited < IDLE_WAIT)); do
        # CPU, not pgrep: builds queued on SwiftPM's lock sleep and do not disturb a run
        local a b
        a=$(busy_ticks); sleep 1; b=$(busy_ticks)
        (((b - a) <= 10)) && return 0   # under 10% of one core busy over that second (CLK_TCK 100)
        waited=$((waited + 1))
    done
    log "machine still busy after ${IDLE_WAIT}s; measuring anyway (the row will be flagged)"
}

# measure NAME BODY CONNS SECONDS REP PROXYPID TARGETPORT
# perf_start NAME PID: with BENCH_PERF=1, samples a gateway's or HAProxy's run (PERF_PID).
PERF_PID="" PERF_DATA=""
perf_start() {
    PERF_PID="" MALLOC_PID=""
    [[ $1 == gateway* || $1 == haproxy* ]] && command -v perf >/dev/null || return 0
    if [[ $MALLOCS != 0 ]]; then malloc_count_start "$@"; return 0; fi
    if [[ $SYSCALLS != 0 ]]; then syscall_count_start "$@"; return 0; fi
    ((PERF)) || return 0
    PERF_DATA="$WORK/perf-$1-$2.data"
    if [[ -n "${BENCH_PERF_EVENT:-}" ]]; then   # e.g. syscalls:sys_enter_mprotect: every hit's stack
        perf record -q -c 1 -g -e "$BENCH_PERF_EVENT" -p "$3" -o "$PERF_DATA" >/dev/null 2>&1 &
    else
        perf record -q -F 999 --call-graph "${BENCH_PERF_CALLGRAPH:-fp}" -p "$3" -o "$PERF_DATA" >/dev/null 2>&1 &
    fi
    PERF_PID=$!
}

# malloc_count_start NAME LOAD PID (BENCH_MALLOCS=1): counts the process's malloc calls with a
# uprobe on glibc's malloc (added once; every thread of PID, the run's whole length).
MALLOC_PID="" MALLOC_OUT=""
malloc_count_start() {
    local libc
    libc=$(awk '$6 ~ /libc\.so/ {print $6; exit}' "/proc/$3/maps")
    [[ -n "$libc" ]] || { note "$1: no libc mapped; mallocs not counted"; return 0; }
    perf probe -l 2>/dev/null | grep -q 'probe_libc:malloc ' ||
        perf probe -q -x "$libc" --add malloc >/dev/null 2>&1 ||
        { note "mallocs not counted: perf probe on $libc failed"; return 0; }
    MALLOC_OUT="$WORK/mallocs-$1-$2.csv"
    if [[ $MALLOCS == sites ]]; then
        perf record -q -g -e probe_libc:malloc -p "$3" -o "${MALLOC_OUT%.csv}.data" >/dev/null 2>&1 &
    else
        perf stat -x, -e probe_libc:malloc -p "$3" -o "$MALLOC_OUT" >/dev/null 2>&1 &
    fi
    MALLOC_PID=$!
}

# counter_stop: stops the perf counting MALLOC_PID (waiting for it to write its counts) and
# sets COUNTER_OUT to the path of its text result, beside the results file.
counter_stop() {
    kill -INT "$MALLOC_PID" 2>/dev/null || true
    wait "$MALLOC_PID" 2>/dev/null || true
    MALLOC_PID=""
    COUNTER_OUT="$(dirname "$OUT")/$(basename "${MALLOC_OUT%.csv}").txt"
}

# malloc_count_stop RUNSFILE: the count over the requests of the run just appended to RUNSFILE,
# added to that record (mallocs_per_req) and written beside the results file.
malloc_count_stop() {
    counter_stop
    local out=$COUNTER_OUT
    if [[ $MALLOCS == sites ]]; then
        local requests
        requests=$(tail -n 1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("requests") or 0)')
        python3 "$HELPERS/malloc_sites.py" "${MALLOC_OUT%.csv}.data" --requests "$requests" >"$out" 2>&1 || true
        [[ -n "${BENCH_MALLOCS_KEEP:-}" ]] && mv "${MALLOC_OUT%.csv}.data" "$(dirname "$OUT")/" || rm -f "${MALLOC_OUT%.csv}.data"
        log "malloc sites: $out"
        return 0
    fi
    python3 - "$1" "$MALLOC_OUT" "$out" <<'EOF'
import json, sys
runs, csv, out = sys.argv[1:]
count = next((int(float(l.split(",")[0])) for l in open(csv) if "probe_libc:malloc" in l and l[0].isdigit()), None)
lines = open(runs).read().splitlines()
rec = json.loads(lines[-1])
requests = rec.get("requests") or 0
per_req = round(count / requests, 1) if count is not None and requests else None
rec["mallocs"], rec["mallocs_per_req"] = count, per_req
lines[-1] = json.dumps(rec)
open(runs, "w").write("\n".join(lines) + "\n")
open(out, "w").write(f"{rec.get('name')}: {count} mallocs over {requests} requests = {per_req} per request\n")
print(f"==> mallocs: {rec.get('name')} {per_req} per request ({count} / {requests})", file=sys.stderr)
EOF
    rm -f "$MALLOC_OUT"
}

# syscall_count_start NAME LOAD PID (BENCH_SYSCALLS=1): counts the process's system calls of the
# kinds a proxy makes per request (every thread of PID, the run's whole length).
SYSCALL_EVENTS=read,write,readv,writev,recvfrom,sendto,recvmsg,sendmsg,epoll_wait,epoll_pwait,epoll_ctl,futex,accept4,connect,close,setsockopt,getsockopt,splice,mmap,munmap,brk,madvise,mprotect,timerfd_settime,sched_yield
syscall_count_start() {
    local events=() e
    for e in ${SYSCALL_EVENTS//,/ }; do events+=(-e "syscalls:sys_enter_$e"); done
    MALLOC_OUT="$WORK/syscalls-$1-$2.csv"
    perf stat -x, "${events[@]}" -e page-faults,context-switches -p "$3" -o "$MALLOC_OUT" >/dev/null 2>&1 &
    MALLOC_PID=$!
}

# syscall_count_stop RUNSFILE: the counts over the requests of the run just appended to RUNSFILE.
syscall_count_stop() {
    counter_stop
    local out=$COUNTER_OUT
    python3 - "$1" "$MALLOC_OUT" "$out" <<'EOF'
import json, sys
runs, csv, out = sys.argv[1:]
rec = json.loads(open(runs).read().splitlines()[-1])
requests = rec.get("requests") or 0
counts = {}
for line in open(csv):
    parts = line.split(",")
    if len(parts) > 2 and parts[0].replace(".", "").isdigit():
        counts[parts[2].split("sys_enter_")[-1]] = int(float(parts[0]))
other = {k: counts.pop(k) for k in ("page-faults", "context-switches") if k in counts}
total = sum(counts.values())
rows = [f"{rec.get('name')}: {total} system calls over {requests} requests"
        + (f" = {total / requests:.2f} per request" if requests else "")]
for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
    if n:
        rows.append(f"  {name:<12} {n:>10}" + (f"  {n / requests:6.2f}/req" if requests else ""))
for name, n in other.items():
    rows.append(f"  ({name}: {n}" + (f", {n / requests:.3f}/req)" if requests else ")"))
open(out, "w").write("\n".join(rows) + "\n")
print("==> syscalls: " + rows[0], file=sys.stderr)
EOF
    rm -f "$MALLOC_OUT"
}

# perf_stop RUNSFILE: ends the sampling and writes where the CPU went (perf_summary.py, in µs
# per request from the run just appended to RUNSFILE) to perf-NAME-LOAD.txt beside the results.
perf_stop() {
    if [[ -n "$MALLOC_PID" && $SYSCALLS != 0 && $MALLOCS == 0 ]]; then syscall_count_stop "$1"; fi
    [[ -n "$MALLOC_PID" ]] && malloc_count_stop "$1"
    [[ -n "$PERF_PID" ]] || return 0
    kill -INT "$PERF_PID" 2>/dev/null || true
    wait "$PERF_PID" 2>/dev/null || true
    local out per_req
    out="$(dirname "$OUT")/$(basename "${PERF_DATA%.data}").txt"
    per_req=$(tail -n 1 "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin).get("cpu_us_per_req"); print(v or "")' 2>/dev/null || true)
    python3 "$HELPERS/perf_summary.py" "$PERF_DATA" ${per_req:+--cpu-us-per-req "$per_req"} >"$out" 2>&1 || true
    [[ -n "${BENCH_PERF_KEEP:-}" ]] && mv "$PERF_DATA" "$(dirname "$OUT")/" || rm -f "$PERF_DATA"
    PERF_PID=""
    log "perf: $out"
}

measure() {
    local name=$1 body=$2 conns=$3 secs=$4 rep=$5 pid=$6 port=$7 host lua
    host=$(request_host "$name")
    lua="$WORK/$body@$host.lua"
    # A body named FILE-app: FILE, requested with an app's head (absolute-app.lua).
    local file=${body%-app} template=absolute.lua
    [[ $body == *-app ]] && template=absolute-app.lua
    [[ -f "$lua" ]] || render "$TEMPLATES/$template" "$lua" HOST="$host" FILE="$file"
    if [[ $name != direct ]] && ! fetch_check "$port" "$file" "$host"; then
        fail "$name: /$file through the proxy differs from the origin's (HTTP $(cat "$WORK/fetched.code" 2>/dev/null))"
        return 1
    fi
    # The first run of each load follows a warm-up (measure.py reads the idle RSS before it).
    local warmup=0; ((rep == 1)) && [[ $name != mitmdump ]] && warmup=$WARMUP
    wait_idle
    # tinyproxy closes every client connection after a response without saying so:
    # wrk counts a read error per request and reconnects. Expected, noted, not a failure.
    local tolerate=""; [[ $name == tinyproxy ]] && tolerate=1
    perf_start "$name" "$body-$conns-run$rep" "$pid"
    local ok=1
    timeout $((secs + 60)) taskset -c 0 python3 "$HELPERS/measure.py" --name "$name" --body "$body" --conns "$conns" \
        --seconds "$secs" --rep "$rep" --target "127.0.0.1:$port" --lua "$lua" --proxy-pid "$pid" \
        --origin-pid "${COUNT_ORIGIN_PID:-$ORIGIN_PID}" \
        --origin-status "${COUNT_ORIGIN_STATUS:-http://127.0.0.1:$ORIGIN_PORT/nginx_status}" \
        --out "$RUNS_FILE" --warmup "$warmup" ${tolerate:+--expect-read-errors} ${MEASURE_FLAGS[@]+"${MEASURE_FLAGS[@]}"} || ok=0
    perf_stop "$RUNS_FILE"
    if ((!ok)); then
        fail "$name $body c=$conns: wrk run failed"
        return 1
    fi
    check_run "$RUNS_FILE" "$name"
}

# check_run RUNSFILE NAME: the run just appended forwarded every request (no non-2xx, no
# socket errors, the origin saw them all) and finished in time; a failure otherwise.
check_run() {
    python3 - "$1" "$2" "$WORK/failures.txt" <<'EOF'
import json, sys
rec = json.loads(open(sys.argv[1]).read().splitlines()[-1])
name, problems = sys.argv[2], []
errors = {k: v for k, v in rec["errors"].items() if v}
if rec.get("expect_read_errors") and set(errors) <= {"read"}:
    errors = {}
if rec["non2xx"]:
    problems.append(f"{rec['non2xx']} non-2xx responses")
if errors:
    problems.append("socket errors " + ", ".join(f"{k} {v}" for k, v in errors.items()))
if rec["origin_requests"] is not None and rec["origin_requests"] < 0.99 * rec["requests"]:
    problems.append(f"origin saw only {rec['origin_requests']} of {rec['requests']} requests (cached or not forwarded?)")
if rec["timed_out"]:
    problems.append("wrk did not finish in time")
if problems:
    streams = f"x{rec['streams']}" if rec.get("streams") else ""
    line = f"{name} {rec['body']} c={rec['conns']}{streams} run {rec['rep']}: " + "; ".join(problems)
    open(sys.argv[3], "a").write(line + "\n")
    print("!!! FAIL: " + line, file=sys.stderr)
EOF
}

bench_proxy() { # bench_proxy NAME
    local name=$1 load body conns rep secs=$RUN_SECONDS
    [[ $name == mitmdump ]] && secs=$MITM_SECONDS
    log "$name"
    if [[ $name == direct ]]; then
        pin_tree 1 "$ORIGIN_PID"   # direct: wrk on CPU 0, nginx on CPU 1
        for load in "${LOADS[@]}"; do
            read -r body conns <<<"$load"
            for ((rep = 1; rep <= REPEAT; rep++)); do measure direct "$body" "$conns" "$secs" "$rep" 0 "$ORIGIN_PORT" || true; done
        done
        pin_tree 0 "$ORIGIN_PID"
        return 0
    fi
    start_proxy "$name"
    local pid=$PROXY_PID
    if wait_ready "$name"; then
        for load in "${LOADS[@]}"; do
            read -r body conns <<<"$load"
            for ((rep = 1; rep <= REPEAT; rep++)); do measure "$name" "$body" "$conns" "$secs" "$rep" "$pid" "$PROXY_PORT" || true; done
        done
    fi
    kill -0 "$pid" 2>/dev/null || fail "$name exited during the benchmark; log: $(tail -n 5 "$(proxy_log "$name")" 2>/dev/null | tr '\n' ' ')"
    [[ $name == gateway-otel ]] && otel_drops
    stop_pid "$pid"
    if [[ -n "$SINK_PID" ]]; then stop_pid "$SINK_PID"; SINK_PID=""; fi
}

# otel_drops: notes the spans gateway-otel dropped (its figure leaves their export out).
otel_drops() {
    local dropped
    dropped=$(curl -sf --max-time 5 "http://127.0.0.1:$PROXY_ADMIN/metrics" | grep '^gateway_trace_spans_dropped_total' | tr '\n' ' ' || true)
    if [[ -n "$dropped" ]]; then note "gateway-otel dropped spans: $dropped"; else log "gateway-otel: no span dropped"; fi
}

bench_group() { # bench_group LOADS NAME...: the proxies up at once, their runs alternating
    # (A, B, C, then B, C, A, ...) per load, so the drift of this machine over minutes falls on
    # all alike. Each repetition starts one proxy later than the one before (as
    # scripts/bench/interleaved.sh does): a run's place in the round moves its figure (in one
    # run without the rotation, the fourth and fifth proxies of the first round read 15-20%
    # above their later rounds while the first read the same). LOADS: "BODY CONNS" separated
    # by ";", as BENCH_LOADS.
    local loads=() names=() pids=() ports=() admins=() load body conns rep i k ready=1
    IFS=';' read -r -a loads <<<"$1"; shift
    names=("$@")
    log "${names[*]}, runs alternating"
    for i in "${!names[@]}"; do
        start_proxy "${names[i]}"; pids+=("$PROXY_PID"); ports+=("$PROXY_PORT"); admins+=("$PROXY_ADMIN")
    done
    for i in "${!names[@]}"; do
        PROXY_PID=${pids[i]} PROXY_PORT=${ports[i]}
        wait_ready "${names[i]}" || { ready=0; break; }
    done
    if ((ready)); then
        for load in "${loads[@]}"; do
            read -r body conns <<<"$load"
            for ((rep = 1; rep <= REPEAT; rep++)); do
                for ((k = 0; k < ${#names[@]}; k++)); do
                    i=$(((k + rep - 1) % ${#names[@]}))
                    measure "${names[i]}" "$body" "$conns" "$RUN_SECONDS" "$rep" "${pids[i]}" "${ports[i]}" || true
                done
            done
        done
    fi
    for i in "${!names[@]}"; do
        kill -0 "${pids[i]}" 2>/dev/null ||
            fail "${names[i]} exited during the benchmark; log: $(tail -n 5 "$(proxy_log "${names[i]}")" 2>/dev/null | tr '\n' ' ')"
    done
    for i in "${!names[@]}"; do
        [[ ${names[i]} == gateway-otel ]] && PROXY_ADMIN=${admins[i]} otel_drops
    done
    for i in "${!names[@]}"; do stop_pid "${pids[i]}"; done
    if [[ -n "$SINK_PID" ]]; then stop_pid "$SINK_PID"; SINK_PID=""; fi
}
bench_pair() { bench_group "$LOADS_TEXT" "$1" "$2"; } # bench_pair A B: two proxies, every load

gateway_extras() {
    log "gateway memory: 1,000 keep-alive connections, 1 GiB stream"
    start_proxy gateway
    local pid=$PROXY_PID port=$PROXY_PORT idle stream
    wait_ready gateway || return 0
    if ! idle=$(timeout 180 taskset -c 0 python3 "$HELPERS/idle_conns.py" --proxy "127.0.0.1:$port" --pid "$pid" \
        --url "http://127.0.0.1:$ORIGIN_PORT/1k" --count 1000 2>"$WORK/idle.err"); then
        fail "gateway with 1,000 connections: $(tail -n 1 "$WORK/idle.err")"
        idle=$(python3 -c 'import json,sys; print(json.dumps({"error": sys.argv[1]}))' "$(tail -n 1 "$WORK/idle.err")")
    fi
    if ! stream=$(timeout 300 python3 "$HELPERS/stream_rss.py" --proxy "127.0.0.1:$port" --pid "$pid" \
        --url "http://127.0.0.1:$ORIGIN_PORT/1g" --max-time 240 2>"$WORK/stream.err"); then
        stream='{"error": "stream_rss.py failed"}'
    fi
    echo "{\"idle_conns\": $idle, \"stream\": $stream}" >"$WORK/gateway-extras.json"
    python3 - "$WORK/gateway-extras.json" "$WORK/failures.txt" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))
s, i, bad = e["stream"], e["idle_conns"], []
if s.get("bytes") != 1 << 30 or s.get("http_code") != 200:
    bad.append(f"gateway 1 GiB stream: HTTP {s.get('http_code')}, {s.get('bytes')} bytes {s.get('curl_error', '')}")
if "ok_responses" in i and i["ok_responses"] != i["count"]:
    bad.append(f"gateway 1,000 connections: only {i['ok_responses']} 2xx responses")
for line in bad:
    open(sys.argv[2], "a").write(line + "\n")
    print("!!! FAIL: " + line, file=sys.stderr)
EOF
    stop_pid "$pid"
}

# ---------------------------------------------------------------- HTTP/2 rows (issue 37)
# An nginx origin with TLS and HTTP/2 (the plain origin's files; its own stub_status on a
# plain port), a throwaway CA and leaf for it and for HAProxy's TLS frontend, and two groups:
# H2ProxyLoad through the gateway's interception vs HAProxy as a TLS-terminating h2 reverse
# proxy (and the TLS origin direct), then wrk through each proxy to the TLS origin over h2
# and over HTTP/1.1. Records go to runs-h2.jsonl; report.py gives them a section of their own.
TLS_ORIGIN_PORT="" TLS_STATUS_PORT="" TLS_ORIGIN_PID="" TLS_MTLS_PORT="" TLS_CLOSE_PORT=""

make_h2_certs() { # the CA, leaf (P-256; SAN localhost, H2_HOST, 127.0.0.1) and client certificate in $WORK/tls
    local dir="$WORK/tls"
    mkdir -p "$dir"
    render "$TEMPLATES/h2-certs.cnf" "$dir/certs.cnf" H2_HOST="$H2_HOST"
    if ! {
        openssl req -x509 -config "$dir/certs.cnf" -extensions ca -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -nodes -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" -days 7 -subj "/CN=gateway bench CA" &&
            openssl req -new -config "$dir/certs.cnf" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
                -nodes -keyout "$dir/leaf-key.pem" -out "$dir/leaf.csr" -subj "/CN=localhost" &&
            openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -set_serial 2 -days 7 \
                -extfile "$dir/certs.cnf" -extensions leaf -out "$dir/leaf.pem" &&
            openssl req -new -config "$dir/certs.cnf" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
                -nodes -keyout "$dir/client-key.pem" -out "$dir/client.csr" -subj "/CN=gateway bench client" &&
            openssl x509 -req -in "$dir/client.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -set_serial 3 -days 7 \
                -extfile "$dir/certs.cnf" -extensions client -out "$dir/client.pem" &&
            chmod 600 "$dir/client-key.pem"
    } >"$dir/openssl.log" 2>&1; then
        fail "HTTP/2 rows: openssl could not make the bench CA: $(tail -n 2 "$dir/openssl.log" | tr '\n' ' ')"
        return 1
    fi
    cat "$dir/leaf.pem" "$dir/leaf-key.pem" >"$dir/leaf-bundle.pem"   # HAProxy's crt: certificate and key
}

# h2_fetch PROXYPORT URL CAFILE: /1k over HTTP/2 (through the proxy with CONNECT when
# PROXYPORT is set) answers 200 with the origin's bytes.
h2_fetch() {
    local via=() got="$WORK/fetched"
    [[ -n "$1" ]] && via=(-x "http://127.0.0.1:$1")
    rm -f "$got"
    curl -sS --max-time 10 --http2 --cacert "$3" ${via[@]+"${via[@]}"} -o "$got" -w '%{http_code} %{http_version}' "$2" \
        >"$WORK/fetched.code" 2>"$WORK/fetched.err" &&
        [[ $(cat "$WORK/fetched.code") == "200 2" ]] && cmp -s "$got" "$WORK/htdocs/1k"
}

start_tls_origin() {
    mkdir -p "$WORK/origin-tls-tmp"
    read -r TLS_ORIGIN_PORT TLS_STATUS_PORT TLS_MTLS_PORT TLS_CLOSE_PORT < <(free_ports 4)
    render "$TEMPLATES/h2-origin-nginx.conf" "$WORK/origin-tls.conf" DIR="$WORK" \
        TLS_ORIGIN_PORT="$TLS_ORIGIN_PORT" TLS_STATUS_PORT="$TLS_STATUS_PORT" TLS_MTLS_PORT="$TLS_MTLS_PORT" \
        TLS_CLOSE_PORT="$TLS_CLOSE_PORT"
    start_bg "$WORK/origin-tls.out" taskset -c 0 nginx -c "$WORK/origin-tls.conf" -p "$WORK"
    TLS_ORIGIN_PID=$BG_PID
    local i
    for ((i = 0; i < 100; i++)); do
        h2_fetch "" "https://127.0.0.1:$TLS_ORIGIN_PORT/1k" "$WORK/tls/ca.pem" && return 0
        kill -0 "$TLS_ORIGIN_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "HTTP/2 rows: the TLS origin (nginx) did not answer /1k over h2 (last: $(cat "$WORK/fetched.code" 2>/dev/null) $(cat "$WORK/fetched.err" 2>/dev/null)); $(tail -n 3 "$WORK/origin-tls-error.log" "$WORK/origin-tls.out" 2>/dev/null | tr '\n' ' ')"
    return 1
}

h2_ready() { # h2_ready NAME: the proxy at PROXY_PORT (PROXY_PID) answers /1k over h2, as H2ProxyLoad will ask
    local via url ca
    case "$1" in
        gateway-intercept-h2) via=$PROXY_PORT url="https://$H2_HOST/1k" ca="$WORK/gateway-ca.pem" ;;
        *) via="" url="https://127.0.0.1:$PROXY_PORT/1k" ca="$WORK/tls/ca.pem" ;;
    esac
    until_proxy_answers "$1" "does not forward over HTTP/2" h2_fetch "$via" "$url" "$ca"
}

# until_proxy_answers NAME WHAT CHECK...: runs CHECK every 0.1 s (30 s at most) while the proxy at
# PROXY_PID lives; if it never passes, fails NAME ("did not start or WHAT") with the last answer and
# the proxy's log.
until_proxy_answers() {
    local name=$1 what=$2 i
    shift 2
    for ((i = 0; i < 300; i++)); do
        "$@" && return 0
        kill -0 "$PROXY_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "$name did not start or $what (last: $(cat "$WORK/fetched.code" 2>/dev/null) $(cat "$WORK/fetched.err" 2>/dev/null)); log: $(tail -n 5 "$(proxy_log "$name")" 2>/dev/null | tr '\n' ' ')"
    return 1
}

# measure_h2 NAME CONNS STREAMS REP PROXYPID PORT: one H2ProxyLoad run (measure_h2.py): through
# the gateway's interception (CONNECT H2_HOST:443), or straight to the TLS port of HAProxy or
# of the origin (direct-h2). The client runs on CPU 0; its first run of a load follows a warm-up.
measure_h2() {
    local name=$1 conns=$2 streams=$3 rep=$4 pid=$5 port=$6 warmup=0 client=()
    case "$name" in
        gateway-intercept-h2) client=(--proxy "127.0.0.1:$port" --target "$H2_HOST:443" --ca "$WORK/gateway-ca.pem") ;;
        *) client=(--direct --target "127.0.0.1:$port" --ca "$WORK/tls/ca.pem") ;;
    esac
    ((rep == 1)) && warmup=$WARMUP
    wait_idle
    perf_start "$name" "$conns-$streams-run$rep" "$pid"
    local ok=1
    timeout $((RUN_SECONDS + warmup + 90)) taskset -c 0 python3 "$HELPERS/measure_h2.py" --name "$name" --body 1k \
        --conns "$conns" --streams "$streams" --seconds "$RUN_SECONDS" --rep "$rep" --client "$H2_BIN" \
        --proxy-pid "$pid" --origin-pid "$TLS_ORIGIN_PID" --origin-status "http://127.0.0.1:$TLS_STATUS_PORT/nginx_status" \
        --out "$WORK/runs-h2.jsonl" --warmup "$warmup" -- "${client[@]}" --path /1k || ok=0
    perf_stop "$WORK/runs-h2.jsonl"
    if ((!ok)); then
        fail "$name c=${conns}x$streams: H2ProxyLoad run failed"
        return 1
    fi
    check_run "$WORK/runs-h2.jsonl" "$name"
}

# ---------------------------------------------------------------- TLS handshake rows (issue 57)
# tls_ready NAME: the proxy at PROXY_PORT answers /1k over TLS and HTTP/1.1 as tls_connect_load.py
# will ask (curl: CONNECT H2_HOST:443 through the gateway, its interception CA; HAProxy's TLS port).
tls_ready() {
    local via=() url ca
    case "$1" in
        gateway-intercept-tls) via=(-x "http://127.0.0.1:$PROXY_PORT") url="https://$H2_HOST/1k" ca="$WORK/gateway-ca.pem" ;;
        *) url="https://127.0.0.1:$PROXY_PORT/1k" ca="$WORK/tls/ca.pem" ;;
    esac
    until_proxy_answers "$1" "does not answer over TLS" tls_fetch "$url" "$ca" ${via[@]+"${via[@]}"}
}

# tls_fetch URL CA [CURL OPTIONS...]: one GET of /1k over TLS and HTTP/1.1, the body checked.
tls_fetch() {
    local url=$1 ca=$2 got="$WORK/fetched"
    shift 2
    rm -f "$got"
    curl -sS --max-time 10 --http1.1 --cacert "$ca" "$@" -o "$got" -w '%{http_code} %{http_version}' "$url" \
        >"$WORK/fetched.code" 2>"$WORK/fetched.err" && [[ $(cat "$WORK/fetched.code") == "200 1.1" ]] &&
        cmp -s "$got" "$WORK/htdocs/1k"
}

# measure_tls NAME CONNS REP PROXYPID PORT: one run of tls_connect_load.py (through measure_h2.py, which
# reads its report as H2ProxyLoad's): new connections, each a full TLS handshake and one GET of /1k,
# CONNS in flight; through the gateway's interception (CONNECT H2_HOST:443), or straight to HAProxy's
# TLS port or the origin's (direct-tls). Records in runs-tls.jsonl.
measure_tls() {
    local name=$1 conns=$2 rep=$3 pid=$4 port=$5 warmup=0 client=()
    case "$name" in
        gateway-intercept-tls) client=(--target "127.0.0.1:$port" --connect "$H2_HOST:443" --ca "$WORK/gateway-ca.pem") ;;
        *) client=(--target "127.0.0.1:$port" --ca "$WORK/tls/ca.pem") ;;
    esac
    ((rep == 1)) && warmup=$WARMUP
    wait_idle
    perf_start "$name" "$conns-run$rep" "$pid"
    local ok=1
    timeout $((RUN_SECONDS + warmup + 90)) taskset -c 0 python3 "$HELPERS/measure_h2.py" --name "$name" --body 1k \
        --conns "$conns" --streams 1 --seconds "$RUN_SECONDS" --rep "$rep" --client "$HELPERS/tls_connect_load.py" \
        --proxy-pid "$pid" --origin-pid "$TLS_ORIGIN_PID" --origin-status "http://127.0.0.1:$TLS_STATUS_PORT/nginx_status" \
        --out "$WORK/runs-tls.jsonl" --warmup "$warmup" -- "${client[@]}" --sni "$H2_HOST" --path /1k || ok=0
    perf_stop "$WORK/runs-tls.jsonl"
    if ((!ok)); then
        fail "$name c=$conns: tls_connect_load.py run failed"
        return 1
    fi
    check_run "$WORK/runs-tls.jsonl" "$name"
}

# ---------------------------------------------------------------- WebSocket rows (issue 57)
WS_SINK_PORT="" WS_SINK_PID=""
ws_bytes() { case "$1" in 1k) echo 1024 ;; 1m) echo 1048576 ;; *) echo "$1" ;; esac; }

# ws_ready NAME: a short ws_load.py run through the proxy at PROXY_PORT (or to the sink) delivers messages.
ws_ready() {
    local i via=() out
    [[ $1 == direct-ws* ]] || via=(--proxy)
    for ((i = 0; i < 50; i++)); do
        out=$(python3 "$HELPERS/ws_load.py" --target "127.0.0.1:$PROXY_PORT" --origin "127.0.0.1:$WS_SINK_PORT" \
            ${via[@]+"${via[@]}"} --size 1024 --seconds 0.2 2>&1) &&
            python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r["requests"] and not r["errors"] else 1)' "$out" \
            2>/dev/null && return 0
        kill -0 "$PROXY_PID" 2>/dev/null || break
        sleep 0.2
    done
    fail "$1 does not carry a WebSocket to the sink (last: $(tail -c 300 <<<"$out")); log: $(tail -n 5 "$(proxy_log "$1")" 2>/dev/null | tr '\n' ' ')"
    return 1
}

# measure_ws NAME SIZE CONNS REP PROXYPID PORT: one ws_load.py run (through measure_h2.py): CONNS
# WebSockets sending SIZE-byte binary messages for RUN_SECONDS to the sink, through the proxy at PORT
# (absolute-form handshake) or straight to the sink (direct-ws). Records in runs-ws.jsonl.
measure_ws() {
    local name=$1 size=$2 conns=$3 rep=$4 pid=$5 port=$6 warmup=0 via=()
    [[ $name == direct-ws* ]] || via=(--proxy)
    ((rep == 1)) && warmup=$WARMUP
    wait_idle
    perf_start "$name" "$size-$conns-run$rep" "$pid"
    local ok=1
    timeout $((RUN_SECONDS + warmup + 90)) taskset -c 0 python3 "$HELPERS/measure_h2.py" --name "$name" --body "$size" \
        --conns "$conns" --streams 1 --seconds "$RUN_SECONDS" --rep "$rep" --client "$HELPERS/ws_load.py" \
        --proxy-pid "$pid" --origin-pid "$WS_SINK_PID" --out "$WORK/runs-ws.jsonl" --warmup "$warmup" -- \
        --target "127.0.0.1:$port" --origin "127.0.0.1:$WS_SINK_PORT" ${via[@]+"${via[@]}"} --size "$(ws_bytes "$size")" || ok=0
    perf_stop "$WORK/runs-ws.jsonl"
    if ((!ok)); then
        fail "$name $size c=$conns: ws_load.py run failed"
        return 1
    fi
    check_run "$WORK/runs-ws.jsonl" "$name"
}

# gateway_protocols NAME ADMINPORT: the gateway's own count of each hop's protocol (kept for
# the report), checked against what the row is about.
gateway_protocols() {
    local name=$1 metrics want=""
    metrics=$(curl -sf --max-time 5 "http://127.0.0.1:$2/metrics" |
        grep -E '^gateway_(requests_by_protocol_total|upstream_connections_open)' || true)
    [[ -n "$metrics" ]] && printf '%s\n' "$metrics" | sed "s|^|$name |" >>"$WORK/h2-protocols.txt"
    case "$name" in
        gateway-intercept-h2) want='client_protocol="h2",upstream_protocol="h2"' ;;
        gateway-intercept-tls) want='client_protocol="http/1.1",upstream_protocol="h2"' ;;
        gateway-up-h2*) want='client_protocol="http/1.1",upstream_protocol="h2"' ;;
        gateway-up-h1*) want='client_protocol="http/1.1",upstream_protocol="http/1.1"' ;;
    esac
    [[ -z "$want" ]] || grep -qF "$want" <<<"$metrics" ||
        fail "$name: the gateway counted no exchange with $want (its metrics: $(tr '\n' ' ' <<<"$metrics"))"
}

# bench_h2_group KIND NAME...: the proxies up at once, their runs alternating (as bench_group:
# each repetition starts one proxy later). KIND client: H2ProxyLoad over H2_LOADS ("CONNS
# STREAMS"); KIND wrk: measure() over H2_UPSTREAM_LOADS ("BODY CONNS"; the caller points
# measure() at its runs file and the TLS origin), wrk-new the same over TLS_UPSTREAM_LOADS;
# KIND tls: tls_connect_load.py over TLS_LOADS ("CONNS"); KIND ws: ws_load.py over WS_LOADS
# ("SIZE CONNS"). A name direct-* starts nothing: its runs go to DIRECT_PORT, in turn with the others.
DIRECT_PORT=""
bench_h2_group() {
    local kind=$1 names=() pids=() ports=() admins=() loads=() load a b rep i k ready=1 text
    shift
    names=("$@")
    case "$kind" in
        client) text=$H2_LOADS_TEXT ;; wrk) text=$H2_UPSTREAM_LOADS_TEXT ;; wrk-new) text=$TLS_UPSTREAM_LOADS_TEXT ;;
        tls) text=$TLS_LOADS_TEXT ;; ws) text=$WS_LOADS_TEXT ;;
    esac
    IFS=';' read -r -a loads <<<"$text"
    log "${names[*]}, runs alternating"
    for i in "${!names[@]}"; do
        if [[ ${names[i]} == direct-* ]]; then pids+=(0); ports+=("$DIRECT_PORT"); admins+=(""); continue; fi
        start_proxy "${names[i]}"; pids+=("$PROXY_PID"); ports+=("$PROXY_PORT"); admins+=("$PROXY_ADMIN")
    done
    for i in "${!names[@]}"; do
        PROXY_PID=${pids[i]} PROXY_PORT=${ports[i]}
        case "$kind" in
            client) h2_ready "${names[i]}" ;; tls) tls_ready "${names[i]}" ;; ws) ws_ready "${names[i]}" ;;
            *) wait_ready "${names[i]}" ;;
        esac || { ready=0; break; }
    done
    if ((ready)); then
        for load in "${loads[@]}"; do
            read -r a b <<<"$load"
            for ((rep = 1; rep <= REPEAT; rep++)); do
                for ((k = 0; k < ${#names[@]}; k++)); do
                    i=$(((k + rep - 1) % ${#names[@]}))
                    case "$kind" in
                        client) measure_h2 "${names[i]}" "$a" "$b" "$rep" "${pids[i]}" "${ports[i]}" ;;
                        tls) measure_tls "${names[i]}" "$a" "$rep" "${pids[i]}" "${ports[i]}" ;;
                        ws) measure_ws "${names[i]}" "$a" "$b" "$rep" "${pids[i]}" "${ports[i]}" ;;
                        *) measure "${names[i]}" "$a" "$b" "$RUN_SECONDS" "$rep" "${pids[i]}" "${ports[i]}" ;;
                    esac || true
                done
            done
        done
    fi
    for i in "${!names[@]}"; do
        [[ ${names[i]} == direct-* ]] && continue
        if ! kill -0 "${pids[i]}" 2>/dev/null; then
            fail "${names[i]} exited during the benchmark; log: $(tail -n 5 "$(proxy_log "${names[i]}")" 2>/dev/null | tr '\n' ' ')"
        elif ((ready)) && [[ ${names[i]} == gateway-* ]]; then
            gateway_protocols "${names[i]}" "${admins[i]}"
        fi
    done
    for i in "${!names[@]}"; do stop_pid "${pids[i]}"; done
}

bench_http2() {
    log "HTTP/2 and TLS rows (issues 37, 57)"
    local clients=0
    if want_h2_clients; then
        if [[ -x "$H2_BIN" ]]; then clients=1; else note "HTTP/2 client rows skipped: no H2ProxyLoad at $H2_BIN"; fi
    fi
    [[ -x "$GATEWAY_BIN" ]] || { note "HTTP/2 and TLS rows skipped: no gateway binary"; return 0; }
    command -v openssl >/dev/null || { note "HTTP/2 and TLS rows skipped: openssl not installed"; return 0; }
    make_h2_certs || return 0
    : >"$WORK/runs-h2.jsonl"; : >"$WORK/runs-tls.jsonl"
    start_tls_origin || return 0
    local load conns streams rep loads=() peers=1
    command -v haproxy >/dev/null || { peers=0; note "HTTP/2 and TLS rows: HAProxy skipped (not installed)"; }

    # HTTP/2 clients: the TLS origin direct (the client on CPU 0, nginx on CPU 1), then the
    # gateway's interception and HAProxy's TLS termination, alternating.
    if ((clients)); then
        IFS=';' read -r -a loads <<<"$H2_LOADS_TEXT"
        log "direct-h2"
        pin_tree 1 "$TLS_ORIGIN_PID"
        for load in "${loads[@]}"; do
            read -r conns streams <<<"$load"
            for ((rep = 1; rep <= REPEAT; rep++)); do measure_h2 direct-h2 "$conns" "$streams" "$rep" 0 "$TLS_ORIGIN_PORT" || true; done
        done
        pin_tree 0 "$TLS_ORIGIN_PID"
        if ((peers)); then bench_h2_group client gateway-intercept-h2 haproxy-tls-h2; else bench_h2_group client gateway-intercept-h2; fi
    fi

    # h2 upstream vs HTTP/1.1 upstream: wrk (HTTP/1.1, absolute form) through each proxy to the TLS
    # origin; the gateway's rows also with a client certificate configured (the origin's mTLS port).
    if want_h2_upstream; then
        RUNS_FILE="$WORK/runs-h2.jsonl" COUNT_ORIGIN_PID=$TLS_ORIGIN_PID
        COUNT_ORIGIN_STATUS="http://127.0.0.1:$TLS_STATUS_PORT/nginx_status" MEASURE_FLAGS=(--sample-origin-conns)
        local rows=(gateway-up-h2 gateway-up-h1 gateway-up-h2-mtls gateway-up-h1-mtls)
        ((peers)) && rows+=(haproxy-up-h2 haproxy-up-h1)
        bench_h2_group wrk "${rows[@]}"
        RUNS_FILE="$WORK/runs.jsonl" COUNT_ORIGIN_PID="" COUNT_ORIGIN_STATUS="" MEASURE_FLAGS=()
    fi
    if want_tls; then bench_tls_handshakes "$peers"; fi
    stop_pid "$TLS_ORIGIN_PID"
}

# bench_tls_handshakes PEERS: the TLS handshake rows (issue 57) on the TLS origin of bench_http2.
# (a) New intercepted connections: tls_connect_load.py straight to the origin (nginx on CPU 1:
# the client's own ceiling), then through the gateway's interception (CONNECT, TLS with its
# cached leaf, one GET, close) and to HAProxy terminating TLS (the same without the CONNECT),
# alternating. (b) New upstream connections: wrk through the gateway and HAProxy to the origin's
# port that closes every connection after its response (each request a new upstream TLS
# connection: TCP, a handshake verifying the origin's chain, the request); HAProxy as it ships
# (it resumes its last session with the server) and with no-ssl-reuse, alternating. The origin
# logs each handshake as resumed or not (measure.py --origin-log: the run's counts).
bench_tls_handshakes() {
    local peers=$1 conns rep loads=() load
    IFS=';' read -r -a loads <<<"$TLS_LOADS_TEXT"
    log "direct-tls"
    pin_tree 1 "$TLS_ORIGIN_PID"
    for load in "${loads[@]}"; do
        read -r conns <<<"$load"
        for ((rep = 1; rep <= REPEAT; rep++)); do measure_tls direct-tls "$conns" "$rep" 0 "$TLS_ORIGIN_PORT" || true; done
    done
    pin_tree 0 "$TLS_ORIGIN_PID"
    if ((peers)); then bench_h2_group tls gateway-intercept-tls haproxy-tls-term; else bench_h2_group tls gateway-intercept-tls; fi

    RUNS_FILE="$WORK/runs-tls.jsonl" COUNT_ORIGIN_PID=$TLS_ORIGIN_PID
    COUNT_ORIGIN_STATUS="http://127.0.0.1:$TLS_STATUS_PORT/nginx_status"
    MEASURE_FLAGS=(--sample-origin-conns --origin-log "$WORK/origin-tls-close.log")
    if ((peers)); then bench_h2_group wrk-new gateway-up-h1-new haproxy-up-h1-new haproxy-up-h1-new-noreuse
    else bench_h2_group wrk-new gateway-up-h1-new; fi
    RUNS_FILE="$WORK/runs.jsonl" COUNT_ORIGIN_PID="" COUNT_ORIGIN_STATUS="" MEASURE_FLAGS=()
}

# bench_websocket: the WebSocket rows (issue 57). ws_sink.py on CPU 0 beside the client; the sink
# direct (direct-ws), through the gateway (default config) and through HAProxy (the forward proxy
# of the HTTP/1.1 rows), their runs alternating: direct-ws is the client and sink's own ceiling on
# that CPU, so the ×direct of a proxy row says what the proxy takes from it. Then the sink on
# CPU 1 (direct-ws-spread, as nginx in the HTTP/1.1 direct rows: two CPUs for the endpoints).
bench_websocket() {
    log "WebSocket rows (issue 57)"
    [[ -x "$GATEWAY_BIN" ]] || { note "WebSocket rows skipped: no gateway binary"; return 0; }
    : >"$WORK/runs-ws.jsonl"
    WS_SINK_PORT=$(free_ports 1)
    start_bg "$WORK/ws-sink.log" taskset -c 0 python3 "$HELPERS/ws_sink.py" "$WS_SINK_PORT"
    WS_SINK_PID=$BG_PID
    local loads=() load size conns rep rows=(direct-ws gateway-ws)
    PROXY_PID=$WS_SINK_PID PROXY_PORT=$WS_SINK_PORT
    if ! ws_ready direct-ws; then stop_pid "$WS_SINK_PID"; return 0; fi
    if command -v haproxy >/dev/null; then rows+=(haproxy-ws); else note "WebSocket rows: HAProxy skipped (not installed)"; fi
    DIRECT_PORT=$WS_SINK_PORT
    bench_h2_group ws "${rows[@]}"
    IFS=';' read -r -a loads <<<"$WS_LOADS_TEXT"
    log "direct-ws-spread (the sink on CPU 1)"
    pin_tree 1 "$WS_SINK_PID"
    for load in "${loads[@]}"; do
        read -r size conns <<<"$load"
        for ((rep = 1; rep <= REPEAT; rep++)); do measure_ws direct-ws-spread "$size" "$conns" "$rep" 0 "$WS_SINK_PORT" || true; done
    done
    stop_pid "$WS_SINK_PID"
}

# ---------------------------------------------------------------- main
main() {
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    install_packages
    install_mitmproxy
    if want gateway || want config-size || want_tls_origin || want_ws; then build_gateway; fi
    if want nio-floor; then build_floor NIOProxyFloor "$FLOOR_BIN" nio-floor; fi
    if want nio-byte-floor; then build_floor NIOByteFloor "$BYTE_FLOOR_BIN" nio-byte-floor; fi
    if want_h2_clients; then build_floor H2ProxyLoad "$H2_BIN" "HTTP/2 rows (H2ProxyLoad)"; fi
    : >"$WORK/runs.jsonl"; : >"$WORK/notes.txt"; : >"$WORK/failures.txt"
    start_origin
    log "origin nginx on 127.0.0.1:$ORIGIN_PORT; ${RUN_SECONDS}s per run, $REPEAT run(s) per figure"

    # The default gateway and HAProxy run as a pair, their runs alternating: the ratios of
    # the two are the figures issue 14 asks for, and this machine drifts over the minutes a
    # full run takes (8 minutes between them once read 0.94x at 100 KiB where rounds read 1.02x).
    local proxies=(direct gateway+haproxy gateway-log-info gateway-size) t
    for t in "$TEMPLATES"/gateway-*.yaml; do [[ -e $t ]] && proxies+=("$(basename "$t" .yaml)"); done
    proxies+=(nio-floor nio-byte-floor nginx-fp squid tinyproxy mitmdump)
    # `--only http2` alone: the HTTP/2 rows only (they have direct and HAProxy rows of their own),
    # and so for the TLS handshake and WebSocket rows.
    local only_rest=${ONLY//h2-upstream/} word
    only_rest=${only_rest//h2-intercept/}
    for word in http2 tls-handshake websocket; do only_rest=${only_rest//$word/}; done
    [[ -n "$ONLY" && -z "${only_rest//,/}" ]] && proxies=()
    local name
    for name in "${proxies[@]}"; do
        if [[ $name == gateway+haproxy ]]; then
            if want gateway && command -v haproxy >/dev/null; then
                # Tracing (issue 38), the typical policies (issues 14, 40) and `info` logging
                # (issue 40) alternate with them: their ratios to the default config are of the
                # same rounds (run apart, one run's policies row read 1.06x the default and the
                # next 1.17x; the info row once read 1.11x where interleaved runs read
                # 1.03-1.07x). The log writer lingers 8 ms before it drains: what an info run
                # leaves queued is a few hundred lines, well under a millisecond of CPU. Debug
                # traces stay apart: their writer thread may still write trace and body files
                # long after their own runs, on the proxy CPU.
                local paired=(gateway-otel gateway-policies gateway-log-info) candidate
                GROUPED=()
                for candidate in "${paired[@]}"; do
                    # gateway-log-info is gateway.yaml at `info` (no template of its own).
                    [[ -e "$TEMPLATES/$candidate.yaml" || $candidate == gateway-log-info ]] && GROUPED+=("$candidate")
                done
                bench_group "$LOADS_TEXT" gateway haproxy "${GROUPED[@]}"
            elif want gateway; then note "haproxy skipped: not installed"; bench_proxy gateway
            elif command -v haproxy >/dev/null; then bench_proxy haproxy
            else note "haproxy skipped: not installed"; fi
            continue
        fi
        if [[ $name == gateway-size ]]; then
            # One upstream, 500 upstreams (exact, *.suffix), 2,000 deny rules: issue 40's rows, alternating.
            if want gateway || want config-size; then bench_group "$SIZE_LOADS_TEXT" "${SIZE_VARIANTS[@]}"; fi
            continue
        fi
        case "$name" in
            direct) ;;
            gateway-otel|gateway-policies|gateway-log-info)
                [[ " ${GROUPED[*]-} " == *" $name "* ]] && continue; want gateway || want "$name" || continue ;;
            gateway*) want gateway || want "$name" || continue ;;
            *) want "$name" || continue ;;
        esac
        case "$name" in
            mitmdump) [[ -n "$MITMDUMP" ]] || continue ;;
            nio-floor) [[ -x "$FLOOR_BIN" ]] || continue ;;
            nio-byte-floor) [[ -x "$BYTE_FLOOR_BIN" ]] || continue ;;
            squid|tinyproxy|haproxy) command -v "$name" >/dev/null || { note "$name skipped: not installed"; continue; } ;;
        esac
        bench_proxy "$name"
    done
    if ((!NO_EXTRAS)) && want gateway; then gateway_extras; fi
    if want_tls_origin; then bench_http2; fi
    if want_ws; then bench_websocket; fi

    {
        local build="release build"; [[ -n "${BENCH_GATEWAY_BIN:-}" ]] && build="binary $GATEWAY_BIN"
        { want gateway || want config-size || want_tls_origin || want_ws; } && echo "gateway: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet HEAD -- Sources 2>/dev/null || echo ' (+ uncommitted changes in Sources)'), $build"
        echo "$(nginx -v 2>&1 | sed 's/^nginx version: //'), $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
        haproxy -v | head -n 1 | cut -d' ' -f1-3
        want squid && command -v squid >/dev/null && squid -v | head -n 1
        want tinyproxy && command -v tinyproxy >/dev/null && tinyproxy -v
        want mitmdump && [[ -n "$MITMDUMP" ]] && echo "mitmdump $("$MITMDUMP" --version 2>/dev/null | head -n 1 | awk '{print $2}')"
        want_h2_clients && echo "HTTP/2 rows: H2ProxyLoad (Benchmarks/, SwiftNIO + NIOHTTP2 + NIOSSL), $(openssl version | cut -d' ' -f1-2) for the bench PKI"
        want_tls && echo "TLS handshake rows: tls_connect_load.py on $(python3 -c 'import ssl,sys; print(f"Python {sys.version.split()[0]}, {ssl.OPENSSL_VERSION}")')"
        want_ws && echo "WebSocket rows: ws_load.py and ws_sink.py (Python $(python3 -c 'import sys; print(sys.version.split()[0])'), frames by hand)"
    } >"$WORK/versions.txt" 2>/dev/null || true
    python3 - "$WORK/meta.json" "$ORIGINAL_COMMAND" "$RUN_SECONDS" "$MITM_SECONDS" "$REPEAT" <<'EOF'
import json, os, platform, sys, time
path, command, seconds, mitm, repeat = sys.argv[1:]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
json.dump({"command": command, "date": time.strftime("%Y-%m-%d %H:%M %Z"), "seconds": int(seconds),
           "mitm_seconds": int(mitm), "repeat": int(repeat),
           "machine": f"{os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}"}, open(path, "w"))
EOF
    echo >&2
    python3 "$HELPERS/report.py" "$WORK" "$OUT"
    log "written to $OUT"
    if [[ -s "$WORK/failures.txt" ]]; then
        echo >&2; echo "!!! bench.sh: FAILURES:" >&2; sed 's/^/!!!   /' "$WORK/failures.txt" >&2
        exit 1
    fi
}
main "$@"; exit $?
