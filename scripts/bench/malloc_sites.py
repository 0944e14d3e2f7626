#!/usr/bin/env python3
"""Where a proxy's mallocs come from, from `perf record -g -e probe_libc:malloc` (bench.sh
with BENCH_MALLOCS=sites).

    malloc_sites.py PERF.DATA [--requests N] [--top 40]

Each sample is one call to malloc. Its stack (frame pointers) is read from `perf script`;
the Swift runtime and libc frames on top (swift_allocObject, swift_slowAlloc, ...) are
skipped, and the sample is charged to the first frame of a module that made it (NIO, NIOHTTP2,
NIOSSL/BoringSSL, the gateway, the stdlib), demangled with `swift demangle --simplified`.
Also by module of that frame. With --requests, counts are per request.
"""
import argparse
import collections
import re

from perf_summary import demangle, samples

MODULE = re.compile(r"^\$s(\d+)([A-Za-z_][A-Za-z0-9_]*)")
SKIP = re.compile(r"^(swift_|_swift_|swift::|malloc|__libc_malloc|_int_malloc|operator new|\$ss\d*_?(?:Builtin)?|"
                  r"\$ss.*(?:allocate|Allocat|_ContiguousArrayBuffer|_copyToContiguous|reserveCapacity|"
                  r"append|_growArrayCapacity|_createNewBuffer|_copyToNewBuffer|_StringGuts|grow|Storage))")


def module_of(symbol):
    m = MODULE.match(symbol)
    if m:
        return m.group(2)[: int(m.group(1))]
    if symbol.startswith("CNIOBoringSSL") or symbol.startswith("OPENSSL") or symbol.startswith("SSL_"):
        return "BoringSSL"
    return "other"


def stacks(path):
    """Each sample's frames, leaf first, as symbol names (perf_summary.py reads them)."""
    for stack in samples(path):
        yield [symbol for symbol, _ in stack]


def site(stack, depth=1):
    """The first frame (and its `depth - 1` callers) past the runtime's and libc's own frames."""
    for i, symbol in enumerate(stack):
        if symbol in ("[unknown]",) or SKIP.match(symbol):
            continue
        return tuple(stack[i:i + depth])
    return (stack[-1],) if stack else ("?",)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--requests", type=int, default=0)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--depth", type=int, default=1, help="callers shown with each frame (default 1: the frame alone)")
    ap.add_argument("--match", help="only the mallocs whose allocating frame's (mangled) name contains this")
    args = ap.parse_args()
    sites, modules, total = collections.Counter(), collections.Counter(), 0
    for stack in stacks(args.data):
        total += 1
        s = site(stack, args.depth)
        if args.match and args.match not in s[0]:
            total -= 1
            continue
        sites[s] += 1
        modules[module_of(s[0])] += 1
    per = (lambda n: f"{n / args.requests:7.2f}") if args.requests else (lambda n: f"{n:7d}")
    unit = "per request" if args.requests else "mallocs"
    print(f"{total} mallocs" + (f" over {args.requests} requests = {total / args.requests:.1f} per request" if args.requests else ""))
    print(f"\nby module of the allocating frame ({unit}):")
    for m, n in modules.most_common():
        print(f"  {per(n)}  {m}")
    top = sites.most_common(args.top)
    names = demangle(sorted({symbol for s, _ in top for symbol in s}))
    print(f"\ntop allocating frames ({unit}; callers after <-):")
    for s, n in top:
        print(f"  {per(n)}  " + " <- ".join(names.get(symbol, symbol)[:140] for symbol in s))


if __name__ == "__main__":
    main()
