#!/usr/bin/env bash
# Fuzzes the gateway's parsers with libFuzzer (issue 15): the request-target
# parser, request-head validation (through the listener's HTTP decoder), the
# endpoint path normalizer, config decoding, curl/shell quoting, upstream
# response framing (with the head the client gets) and a client's HTTP/2
# frames (through NIOHTTP2 as the listener configures it). Each target
# checks properties, not only "does not crash" (Sources/GatewayFuzzing).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     e.g. scripts/fuzz.sh shell-quoting 300
#
# Builds Fuzz/ (its own package and scratch path, Fuzz/.build) with
# -sanitize=fuzzer,address, runs each target for SECONDS (default 60) on
# Fuzz/Corpus/<target>/, then merges the new inputs into that corpus (-merge=1:
# only inputs that add coverage are kept). A crash or broken property leaves its
# input in Fuzz/.build/crashes/ and fails the script; once fixed, keep it (named)
# in Fuzz/Regressions/<target>/. The main test suite replays Fuzz/Corpus/ and
# Fuzz/Regressions/ through the same checks (GatewayFuzzingTests).
# FUZZ_CONFIG=release builds with -O (faster, longer to build).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/Fuzz"
scratch="$fuzz/.build"
config=${FUZZ_CONFIG:-debug}
all=(target-parser head-validation path-normalizer config-decoding shell-quoting response-framing http2-frames)
which=${1:-all}
seconds=${2:-60}

executable() {
    case "$1" in
    target-parser) echo FuzzTargetParser ;;
    head-validation) echo FuzzHeadValidation ;;
    path-normalizer) echo FuzzPathNormalizer ;;
    config-decoding) echo FuzzConfigDecoding ;;
    shell-quoting) echo FuzzShellQuoting ;;
    response-framing) echo FuzzResponseFraming ;;
    http2-frames) echo FuzzHTTP2Frames ;;
    *) echo "unknown target $1; one of: ${all[*]}" >&2; exit 2 ;;
    esac
}

if [ "$which" = all ]; then targets=("${all[@]}"); else executable "$which" >/dev/null; targets=("$which"); fi

build=(swift build --package-path "$fuzz" --scratch-path "$scratch" -c "$config" -Xswiftc -sanitize=fuzzer,address)
nice -n 10 "${build[@]}"
bin=$("${build[@]}" --show-bin-path)
mkdir -p "$scratch/crashes" "$scratch/logs"

# A broken property ends in fatalError: no Swift backtrace under ASan, libFuzzer reports the input.
export SWIFT_BACKTRACE=enable=no
summary=()
status=0
for target in "${targets[@]}"; do
    exe="$bin/$(executable "$target")"
    corpus="$fuzz/Corpus/$target"
    found="$scratch/found/$target"
    log="$scratch/logs/$target.log"
    mkdir -p "$corpus" "$found"
    # Inputs that once broke a property (named, never merged away): read, not written.
    regressions=(); [ -d "$fuzz/Regressions/$target" ] && regressions=("$fuzz/Regressions/$target")
    echo "== $target: ${seconds}s on $corpus"
    # New inputs go to $found (the first directory); the committed corpus is only read.
    # Config files: new inputs up to 1 KiB keep the committed corpus small (seeds may be longer).
    extra=(); [ "$target" = config-decoding ] && extra=(-max_len=1024)
    if ! nice -n 10 "$exe" "${extra[@]}" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
        -artifact_prefix="$scratch/crashes/$target-" "$found" "$corpus" "${regressions[@]}" >"$log" 2>&1; then
        status=1
        echo "!! $target failed; see $log and $scratch/crashes/:"
        grep -E "Fatal error|ERROR: (AddressSanitizer|libFuzzer)|Test unit written" "$log" | head -5 || true
    fi
    # Keep only inputs that add coverage: merge the old corpus and the new finds into a fresh one.
    merged=$(mktemp -d)
    if nice -n 10 "$exe" -merge=1 -timeout=10 "$merged" "$corpus" "$found" >>"$log" 2>&1; then
        rm -rf "$corpus" && mkdir -p "$corpus" && cp "$merged"/* "$corpus"/ 2>/dev/null || true
        rm -rf "$found"
    fi
    rm -rf "$merged"
    runs=$(awk '/stat::number_of_executed_units:/ { n = $2 } END { print n }' "$log")
    secs=$(awk '/stat::average_exec_per_sec:/ { n = $2 } END { print n }' "$log")
    summary+=("$(printf '%-16s %12s executions  %8s/s  corpus %4s files %8s bytes' "$target" "${runs:-?}" "${secs:-?}" \
        "$(ls "$corpus" | wc -l)" "$(cat "$corpus"/* 2>/dev/null | wc -c)")")
done
echo
printf '%s\n' "${summary[@]}"
exit $status
