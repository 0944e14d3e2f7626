#!/usr/bin/env bash
# Allocations per proxied request (issue 14): a deterministic figure that the noise of
# the machine cannot move.
#
#   scripts/allocs.sh            # build (release) and run Benchmarks/, print the figure
#   scripts/allocs.sh --write    # also put it in scripts/bench-results.md
#
# Benchmarks/ is a package of its own (ordo-one/benchmark with the malloc interposer),
# so the gateway's build and CI never build it. Its GatewayAllocs benchmarks send
# 1,000 sequential keep-alive absolute-form GETs per iteration (1 KiB bodies), on one
# connection, with an allocation-free client, to an in-process origin, directly and
# through an in-process gateway started from scripts/bench/templates (default config,
# typical policies, debug traces; log_level info, lines to /dev/null), and again with
# the head a mobile app sends (10 fields; the "app" rows, against "direct app"). Every malloc of
# the process is counted; the figure is
#     (mallocs via the gateway − mallocs direct) / requests
# from the median iteration of each (the first, warm-up, iteration is left out).
# Counts do not depend on the machine's load: no need to wait for a quiet machine.
#
# Environment:
#   ALLOCS_ITERATIONS  measured iterations of 1,000 requests per benchmark (default 5)
#   BENCH_OUT          results file for --write (default scripts/bench-results.md)
#   ALLOCS_LABEL       a note for this run's line in the file's list of runs (e.g. "before issue 14")
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WRITE=0
case "${1:-}" in
    --write) WRITE=1 ;;
    "") ;;
    -h|--help) sed -n '2,/^set -Eeuo/{/^set -Eeuo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "allocs.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
OUT=${BENCH_OUT:-$ROOT/scripts/bench-results.md}
COMMAND="scripts/allocs.sh${*:+ $*}"

RESULTS=$(mktemp /tmp/gateway-allocs.XXXXXX.jsonl)
trap 'rm -f "$RESULTS"' EXIT
cd "$ROOT/Benchmarks"
echo "==> swift package --scratch-path .build-bench benchmark run --target GatewayAllocs" >&2
ALLOCS_RESULTS="$RESULTS" GATEWAY_ROOT="$ROOT" \
    swift package --scratch-path .build-bench --disable-sandbox benchmark run --target GatewayAllocs --no-progress >&2

python3 - "$RESULTS" "$OUT" "$WRITE" "$COMMAND" "$(cd "$ROOT" && git rev-parse --short HEAD)" <<'EOF'
import json, os, sys, time
from statistics import median

results, out, write, command, commit = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5]
records = {}
for line in open(results):
    if line.strip():
        r = json.loads(line)
        records[r["name"]] = r
if "direct" not in records or len(records) < 2:
    sys.exit(f"allocs.sh: incomplete results: {sorted(records)}")

def per_request(r):
    counts = r["malloc_counts"][r["warmup_iterations"]:] or r["malloc_counts"]
    return median(counts) / r["requests_per_iteration"], counts

direct, direct_counts = per_request(records["direct"])
n = records["direct"]["requests_per_iteration"]
# "... app" rows (a mobile app's 10-field head) count against "direct app".
baselines = {"": direct}
if "direct app" in records:
    baselines[" app"], direct_app_counts = per_request(records["direct app"])
rows = []
for name, r in records.items():
    if name.startswith("direct"):
        continue
    via, counts = per_request(r)
    base = baselines[" app"] if name.endswith(" app") and " app" in baselines else direct
    rows.append((name, via, counts, via - base))

lines = [
    "| path | mallocs per iteration (1,000 requests; measured iterations) | mallocs per request | allocations per proxied request (− direct) |",
    "|---|---|---|---|",
    f"| direct (client → origin) | {', '.join(map(str, direct_counts))} | {direct:.1f} | — |",
]
if " app" in baselines:
    lines.append(f"| direct app (client → origin, app head) | {', '.join(map(str, direct_app_counts))} | {baselines[' app']:.1f} | — |")
for name, via, counts, extra in rows:
    lines.append(f"| {name} | {', '.join(map(str, counts))} | {via:.1f} | **{extra:.1f}** |")

print()
print(f"Allocations per proxied request (gateway {commit}; {n:,} sequential keep-alive GETs per iteration, 1 KiB bodies):")
for name, via, counts, extra in rows:
    base = via - extra
    print(f"  {name:<22} {extra:7.1f} allocations per proxied request   ({via:.1f} via the gateway − {base:.1f} direct)")
print()
print("\n".join(lines))

if write:
    title = "## Allocations per proxied request"
    section = [
        title, "",
        f"`{command}` — {time.strftime('%Y-%m-%d %H:%M %Z')}, gateway {commit}. Benchmarks/ (ordo-one/benchmark 1.38.1, "
        "malloc interposer) counts every malloc of one process holding an allocation-free client, the origin "
        "(GatewayTesting's TestUpstream, 1 KiB body) and, except for direct, an in-process gateway started from "
        "scripts/bench/templates at log_level info (lines to /dev/null). Each iteration is 1,000 sequential "
        "keep-alive absolute-form GETs on one connection (the app rows: with a mobile app's 10-field head, "
        "against direct app); the figure is the median iteration's "
        "(via the gateway − direct) ÷ 1,000. Deterministic up to a few counts per iteration.", "",
    ] + lines + [""]
    text = open(out).read() if os.path.exists(out) else "# Benchmark results\n"
    kept, skipping, history = [], False, []
    for line in text.splitlines():
        if line.startswith("## "):
            skipping = line == title
        if not skipping:
            kept.append(line)
        elif line.startswith("- "):
            history.append(line)   # earlier runs' one-line figures stay (before / after)
    while kept and not kept[-1].strip():
        kept.pop()
    label = os.environ.get("ALLOCS_LABEL", "")
    figures = ", ".join(f"{name.removeprefix('gateway ')} {extra:.1f}" for name, _, _, extra in rows)
    history.append(f"- {time.strftime('%Y-%m-%d')}, gateway {commit}{' (' + label + ')' if label else ''}: {figures}")
    section += ["Runs so far (allocations per proxied request):", ""] + history + [""]
    open(out, "w").write("\n".join(kept + [""] + section))
    print(f"\nwritten to {out}", file=sys.stderr)
EOF
