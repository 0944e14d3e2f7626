#!/usr/bin/env python3
"""Where a proxy's CPU goes, from a `perf record -g` file (bench.sh with BENCH_PERF=1).

    perf_summary.py PERF.DATA [--cpu-us-per-req N]

Each sample's stack is read from `perf script` (frame pointers). Its leaf is
charged to a component: the kernel, TLS (NIOSSL, BoringSSL), HTTP/2 (NIOHTTP2,
NIOHPACK), NIO (NIOCore, NIOPosix), the gateway's own modules, the Swift
stdlib; a leaf in the Swift runtime (retain/release, exclusivity checks,
metadata) or in malloc is charged to the nearest caller frame of one of those,
and also counted apart ("of which ARC/malloc"). Swift symbols name their module
in the mangling (`$s8NIOPosix...`), so no demangling is needed to classify.
Then the modules on the stack of each sample (inclusive), and the hottest leaf
symbols. With --cpu-us-per-req, shares are also given in µs per request.
"""
import argparse
import collections
import re
import shutil
import subprocess
import sys

MODULE = re.compile(r"^\$s(\d+)([A-Za-z_][A-Za-z0-9_]*)")
RUNTIME_LEAF = re.compile(r"^(swift_|_swift_|swift::|\$ss\d*_?(?:Builtin)?)")
MALLOC = {"malloc", "free", "_int_malloc", "_int_free", "malloc_consolidate", "unlink_chunk.constprop.0",
          "cfree", "realloc", "_int_realloc", "calloc", "posix_memalign", "_int_memalign", "__libc_malloc",
          "__libc_free", "tcache_init", "sysmalloc", "__malloc_arena_thread_freeres", "aligned_alloc"}


def module_of(symbol, dso):
    if dso.startswith("[kernel"):
        return "kernel"
    m = MODULE.match(symbol)
    if m:
        return m.group(2)[: int(m.group(1))]
    if symbol.startswith("$ss"):
        return "Swift"
    if symbol.startswith("CNIOBoringSSL") or "boringssl" in symbol.lower():
        return "BoringSSL"
    if symbol in MALLOC or symbol.startswith("__memmove") or symbol.startswith("__memcpy") or symbol.startswith("__memset"):
        return "libc"
    if symbol.startswith("swift") or symbol.startswith("_swift") or "swift::" in symbol:
        return "runtime"
    if "libc.so" in dso:
        return "libc"
    return "other"


def component(module):
    if module == "kernel":
        return "kernel"
    if module in ("NIOSSL", "BoringSSL", "CNIOBoringSSL", "CNIOBoringSSLShims"):
        return "TLS (NIOSSL, BoringSSL)"
    if module in ("NIOHTTP2", "NIOHPACK"):
        return "HTTP/2 (NIOHTTP2, NIOHPACK)"
    if module.startswith("NIO") or module.startswith("_NIO") or module.startswith("CNIO"):
        return "NIO (core, posix)"
    if module.startswith("Gateway"):
        return "gateway"
    if module in ("Swift", "Foundation", "FoundationEssentials", "Logging", "Metrics"):
        return "Swift stdlib, Foundation, Logging"
    return None  # runtime, libc, other: charged to a caller


def samples(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True, text=True).stdout
    stack = []
    for line in out.splitlines():
        line = line.strip()
        if not line:
            if stack:
                yield stack
            stack = []
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        rest = parts[1]
        dso = rest[rest.rfind("(") + 1: -1] if rest.endswith(")") else ""
        sym = rest[: rest.rfind(" (")] if " (" in rest else rest
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        stack.append((sym, dso))
    if stack:
        yield stack


def demangle(names):
    tool = shutil.which("swift-demangle") or shutil.which("swift")
    if not tool or not names:
        return {n: n for n in names}
    cmd = [tool] if tool.endswith("swift-demangle") else [tool, "demangle"]
    out = subprocess.run(cmd + ["--simplified", "--compact"], input="\n".join(names), capture_output=True, text=True).stdout
    lines = out.splitlines()
    return {n: (lines[i] if i < len(lines) else n) for i, n in enumerate(names)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--cpu-us-per-req", type=float)
    args = ap.parse_args()
    self_by = collections.Counter()
    overhead_by = collections.Counter()  # runtime/malloc leaves, by the component charged
    inclusive = collections.Counter()
    leaves = collections.Counter()
    total = 0
    for stack in samples(args.data):
        total += 1
        leaf_sym, leaf_dso = stack[0]
        leaves[(leaf_sym, leaf_dso)] += 1
        charged, overhead = None, False
        for sym, dso in stack:
            c = component(module_of(sym, dso))
            if c:
                charged = c
                break
            overhead = True
        self_by[charged or "other"] += 1
        if overhead and charged:
            overhead_by[charged] += 1
        for m in {module_of(sym, dso) for sym, dso in stack}:
            inclusive[m] += 1
    if not total:
        print("no samples")
        return 0
    per_req = args.cpu_us_per_req

    def share(n):
        pct = 100.0 * n / total
        return f"{pct:5.1f}%" + (f"  {per_req * n / total:6.1f} µs/req" if per_req else "")

    print(f"{total} samples" + (f"; {per_req:.1f} µs of CPU per request" if per_req else ""))
    print("\nself time by component (runtime and malloc leaves charged to their nearest caller):")
    for c, n in self_by.most_common():
        print(f"  {c:<36} {share(n)}   of which ARC/runtime/malloc {100.0 * overhead_by[c] / total:4.1f}%")
    print("\nmodules on the stack (inclusive; a sample counts once per module):")
    for m, n in inclusive.most_common(16):
        print(f"  {m:<36} {share(n)}")
    names = demangle([s for (s, _), _ in leaves.most_common(25)])
    print("\nhottest leaf symbols:")
    for (sym, dso), n in leaves.most_common(25):
        print(f"  {100.0 * n / total:5.1f}%  {names.get(sym, sym)[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
