# What scripts/bench/interleaved.sh, interleaved_h2.sh and interleaved_tls.sh share (sourced, not run):
# a work directory removed on exit with the processes started, and template rendering.

# interleaved_options USAGE ARG...: --rounds N, --seconds S and --help (this script's header)
# read from the ARGs, into ROUNDS and SECONDS_PER_RUN (their defaults set before); the rest,
# from the first other word, in ARGS (at least one, else USAGE and exit 2).
interleaved_options() {
    local usage=$1; shift
    while [[ $# -gt 0 ]]; do
        case $1 in
            --rounds) ROUNDS=$2; shift 2 ;;
            --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
            -h|--help) sed -n '2,/^set -Eeuo/{/^set -Eeuo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
            *) break ;;
        esac
    done
    [[ $# -gt 0 ]] || { echo "usage: $0 [--rounds N] [--seconds S] $usage" >&2; exit 2; }
    ARGS=("$@")
}

# interleaved_wrk_run J [SECONDS]: one wrk run (-t1 -c50, WORK/load.lua, on CPU 0) through
# proxy J (PROXY_PORTS) for SECONDS (default SECONDS_PER_RUN); its request count, or on
# stderr why not: every response must be the origin's 200.
interleaved_wrk_run() {
    local out
    out=$(taskset -c 0 wrk -t1 -c50 -d"${2:-$SECONDS_PER_RUN}s" -s "$WORK/load.lua" "http://127.0.0.1:${PROXY_PORTS[$1]}")
    if grep -qE "Non-2xx|Socket errors" <<<"$out"; then
        echo "not every response was a 200: $(grep -E "Non-2xx|Socket errors" <<<"$out" | tr -s ' ')" >&2
        return 1
    fi
    awk '/requests in/ {print $1}' <<<"$out"
}

# interleaved_started PID PORT NAME: a proxy started, in the lists the rounds go through
# (PROXY_PIDS, PROXY_PORTS, NAMES) and those stopped on exit (PIDS).
interleaved_started() { PIDS+=("$1") PROXY_PIDS+=("$1") PROXY_PORTS+=("$2") NAMES+=("$3"); }

# interleaved_setup PREFIX PIDFILE: WORK (a new /tmp/PREFIX.XXXXXX), PIDS (the processes to
# kill on exit; append to it) and, on exit, the nginx origin whose pid is in WORK/PIDFILE
# stopped and WORK removed.
interleaved_setup() {
    WORK=$(mktemp -d "/tmp/$1.XXXXXX")
    ORIGIN_PID_FILE=$WORK/$2
    PIDS=()
    trap interleaved_cleanup EXIT
}

interleaved_cleanup() {
    [[ ${#PIDS[@]} -gt 0 ]] && kill "${PIDS[@]}" 2>/dev/null
    [[ -f $ORIGIN_PID_FILE ]] && kill "$(cat "$ORIGIN_PID_FILE")" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$WORK"
}

render() { # render TEMPLATE OUT key=value...: the template with each @key@ replaced
    local template=$1 out=$2 expr=() kv; shift 2
    for kv in "$@"; do expr+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
    sed "${expr[@]}" "$template" >"$out"
}

# interleaved_tls_origin PROXIES: the bench PKI in WORK/tls (as bench.sh's make_h2_certs: a CA and
# the origin's leaf for H2_HOST, which HAProxy serves too), WORK/htdocs/1k, PORTS (4 + 2 per proxy:
# the origin's four, then each proxy's own two from PORTS[4]) and the nginx TLS origin
# (h2-origin-nginx.conf, h2 and HTTP/1.1) on PORTS[0], on CPU 0. Needs HERE, TEMPLATES, H2_HOST.
interleaved_tls_origin() {
    mkdir -p "$WORK/tls" "$WORK/htdocs" "$WORK/origin-tls-tmp"
    render "$TEMPLATES/h2-certs.cnf" "$WORK/tls/certs.cnf" H2_HOST="$H2_HOST"
    (
        cd "$WORK/tls"
        openssl req -x509 -config certs.cnf -extensions ca -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -nodes -keyout ca-key.pem -out ca.pem -days 7 -subj "/CN=gateway bench CA"
        openssl req -new -config certs.cnf -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -nodes -keyout leaf-key.pem -out leaf.csr -subj "/CN=localhost"
        openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca-key.pem -set_serial 2 -days 7 \
            -extfile certs.cnf -extensions leaf -out leaf.pem
        cat leaf.pem leaf-key.pem >leaf-bundle.pem
    ) >"$WORK/openssl.log" 2>&1 || { echo "openssl: $(tail -n 3 "$WORK/openssl.log")" >&2; exit 1; }
    head -c 1024 /dev/urandom >"$WORK/htdocs/1k"
    chmod a+rx "$WORK"   # nginx's worker (another user) reads htdocs
    chmod -R a+rX "$WORK/htdocs" "$WORK/tls"
    read -r -a PORTS < <(python3 "$HERE/freeports.py" $((4 + 2 * $1)))
    render "$TEMPLATES/h2-origin-nginx.conf" "$WORK/origin-tls.conf" DIR="$WORK" TLS_ORIGIN_PORT="${PORTS[0]}" \
        TLS_STATUS_PORT="${PORTS[1]}" TLS_MTLS_PORT="${PORTS[2]}" TLS_CLOSE_PORT="${PORTS[3]}"
    taskset -c 0 nginx -c "$WORK/origin-tls.conf" -p "$WORK" >"$WORK/origin.log" 2>&1 &
}

ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }   # ticks PID: its user and kernel clock ticks

# run_line NAME ROUND REQUESTS USER_TICKS KERNEL_TICKS SECONDS: one run's line, as interleaved_summary reads it.
run_line() {
    awk -v n="$1" -v r="$2" -v q="$3" -v u="$4" -v s="$5" -v t="$6" -v hz="$(getconf CLK_TCK)" \
        'BEGIN {printf "%s round %d: %d req (%.0f/s), %.2f us/req (user %.2f, kernel %.2f)\n", n, r, q, q / t, (u + s) * 1e6 / hz / q, u * 1e6 / hz / q, s * 1e6 / hz / q}'
}

# interleaved_rounds RUN: ROUNDS rounds over the proxies (PROXY_PIDS, NAMES), each round
# starting one proxy later than the last: a run's place in the round moved its figure by up
# to 10% on a busy host (later ones read slower), so every proxy takes every place in turn
# (give a multiple of their count as --rounds). `RUN J` makes one run of SECONDS_PER_RUN
# through proxy J and prints its request count, or says on stderr why it failed (every
# response must be the origin's 200, as scripts/bench.sh checks each run). Each run's line
# (its proxy's CPU over the run) goes to stdout and to WORK/runs.txt.
interleaved_rounds() {
    local run=$1 count=${#PROXY_PIDS[@]} round k j requests user0 kernel0 user1 kernel1
    for ((round = 1; round <= ROUNDS; round++)); do
        for ((k = 0; k < count; k++)); do
            j=$(((k + round - 1) % count))
            read -r user0 kernel0 < <(ticks "${PROXY_PIDS[$j]}")
            requests=$("$run" "$j") || { echo "${NAMES[$j]} round $round failed" >&2; exit 1; }
            read -r user1 kernel1 < <(ticks "${PROXY_PIDS[$j]}")
            run_line "${NAMES[$j]}" "$round" "$requests" $((user1 - user0)) $((kernel1 - kernel0)) "$SECONDS_PER_RUN"
        done
    done | tee "$WORK/runs.txt"
}

# interleaved_summary RUNS NAME...: each one's medians (CPU per request, user, kernel, req/s) and,
# for each after the first, the median and quartiles of its per-round ratios to the first.
interleaved_summary() {
    python3 - "$@" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\S+) round (\d+): \d+ req \((\d+)/s\), ([\d.]+) us/req \(user ([\d.]+), kernel ([\d.]+)\)', line)
    if m: runs.setdefault(m.group(1), []).append(tuple(float(x) for x in m.groups()[2:]))
names = sys.argv[2:]
for name in names:
    r = runs[name]
    print(f"{name}: median {statistics.median(x[1] for x in r):.1f} µs/request (user {statistics.median(x[2] for x in r):.1f},"
          f" kernel {statistics.median(x[3] for x in r):.1f}), {statistics.median(x[0] for x in r):.0f} req/s")
for name in names[1:]:
    for what, k in (("CPU/req", 1), ("req/s", 0)):
        ratios = sorted(b[k] / a[k] for a, b in zip(runs[names[0]], runs[name]))
        q = len(ratios) // 4
        print(f"{name} ÷ {names[0]} {what}: per-round median {statistics.median(ratios):.3f} (quartiles {ratios[q]:.3f}-{ratios[-1 - q]:.3f})")
PY
}
