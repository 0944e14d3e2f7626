"""One timed wrk run against a target, with the proxy's CPU time and RSS sampled from /proc.

Appends one JSON object to --out and prints a one-line summary.
"""
import argparse
import json
import re
import resource
import subprocess
import sys
import time
import urllib.request

import procstat

UNITS_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}


def parse_duration_us(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    return float(m.group(1)) * UNITS_US[m.group(2)] if m else None


def parse_wrk(out):
    result = {"rps": None, "requests": 0, "p50_us": None, "p99_us": None, "non2xx": 0,
              "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0}}
    for line in out.splitlines():
        s = line.strip()
        m = re.match(r"^(50|99)(?:\.0+)?%\s+(\S+)$", s)
        if m:
            result[f"p{m.group(1)}_us"] = parse_duration_us(m.group(2))
        m = re.match(r"^(\d+) requests in", s)
        if m:
            result["requests"] = int(m.group(1))
        m = re.match(r"^Requests/sec:\s+([\d.]+)", s)
        if m:
            result["rps"] = float(m.group(1))
        m = re.match(r"^Non-2xx or 3xx responses:\s+(\d+)", s)
        if m:
            result["non2xx"] = int(m.group(1))
        m = re.match(r"^Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", s)
        if m:
            result["errors"] = dict(zip(["connect", "read", "write", "timeout"], map(int, m.groups())))
    return result


def busy_pct(before, after):
    """Busy share of one CPU between two (busy, total) readings, in percent."""
    busy, total = after[0] - before[0], after[1] - before[1]
    return round(100.0 * busy / total, 1) if total > 0 else None


def origin_counters(url):
    """(accepted connections, requests) from nginx stub_status."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
        accepts, _handled, requests = (int(x) for x in text.splitlines()[2].split())
        return accepts, requests
    except Exception:  # noqa: BLE001 - a missing counter only disables the check
        return None


def origin_open_connections(url):
    """Connections open at the origin now, from nginx stub_status, less the one asking."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
        return int(text.splitlines()[0].split(":")[1]) - 1
    except Exception:  # noqa: BLE001 - a missing counter only disables the figure
        return None


def tls_log_counts(path):
    """(handshakes, resumed) logged so far by the TLS origin's port that closes each connection: one
    line per request, `r` when nginx's $ssl_session_reused says the TLS session was resumed."""
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except FileNotFoundError:
        return 0, 0
    return sum(1 for l in lines if l.strip()), sum(1 for l in lines if l.strip() == b"r")


class OpenConnectionsSampler:
    """The most connections open at the origin during a run, read about once a second
    (the HTTP/2 rows: the upstream connections a proxy holds)."""

    def __init__(self, url):
        self.url, self.peak, self.next_at = url, None, 0.0

    def tick(self):
        now = time.monotonic()
        if not self.url or now < self.next_at:
            return
        self.next_at = now + 1.0
        n = origin_open_connections(self.url)
        if n is not None:
            self.peak = n if self.peak is None else max(self.peak, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--rep", type=int, default=1)
    ap.add_argument("--target", required=True, help="host:port wrk connects to")
    ap.add_argument("--lua", required=True)
    ap.add_argument("--proxy-pid", type=int, default=0)
    ap.add_argument("--origin-pid", type=int, default=0)
    ap.add_argument("--origin-status", default="")
    ap.add_argument("--wrk-cpu", default="0")
    ap.add_argument("--proxy-cpu", default="1", help="the CPU the proxy is pinned to (its busy share is recorded)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--warmup", type=int, default=0,
                    help="seconds of the same load first, unmeasured (after the idle RSS is read)")
    ap.add_argument("--expect-read-errors", action="store_true",
                    help="the proxy closes connections after each response (tinyproxy): read errors are expected")
    ap.add_argument("--sample-origin-conns", action="store_true",
                    help="record the most connections open at the origin during the run (origin_conns_peak)")
    ap.add_argument("--origin-log", default="",
                    help="the origin's log of TLS session reuse (one line a request, r when resumed): the run's "
                         "counts go to origin_tls_handshakes and origin_tls_resumed")
    args = ap.parse_args()

    proxy_pids = procstat.tree(args.proxy_pid)
    origin_pids = procstat.tree(args.origin_pid)
    rss_idle = procstat.rss_kib(proxy_pids) if proxy_pids else None
    if args.warmup > 0:
        # A fresh process's first seconds (connections opened, files created, caches cold)
        # are not its steady state; the idle RSS above is read before them.
        subprocess.run(["taskset", "-c", args.wrk_cpu, "wrk", "-t1", f"-c{args.conns}", f"-d{args.warmup}s",
                        "--timeout", "5s", "-s", args.lua, f"http://{args.target}/"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=args.warmup + 30, check=False)
    before_origin = origin_counters(args.origin_status) if args.origin_status else None
    before_log = tls_log_counts(args.origin_log) if args.origin_log else None

    cmd = ["taskset", "-c", args.wrk_cpu, "wrk", "-t1", f"-c{args.conns}", f"-d{args.seconds}s",
           "--latency", "--timeout", "5s", "-s", args.lua, f"http://{args.target}/"]
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, proxy0, origin0 = procstat.system_busy_ticks(), procstat.cpu_ticks(proxy_pids), procstat.cpu_ticks(origin_pids)
    proxy_user0 = procstat.cpu_user_ticks(proxy_pids)
    # Each CPU's busy share: when the load CPU (wrk, and the origin beside it) is saturated, the
    # run's throughput is the load side's, whichever proxy is in the middle.
    load_cpu0, proxy_cpu0 = procstat.cpu_busy_ticks(args.wrk_cpu), procstat.cpu_busy_ticks(args.proxy_cpu)
    t0 = time.monotonic()
    wrk = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    rss_peak = rss_idle or 0
    deadline = t0 + args.seconds + 30
    sampler = OpenConnectionsSampler(args.origin_status if args.sample_origin_conns else None)
    while wrk.poll() is None and time.monotonic() < deadline:
        if proxy_pids:
            rss_peak = max(rss_peak, procstat.rss_kib(proxy_pids))
        sampler.tick()
        time.sleep(0.1)
    timed_out = wrk.poll() is None
    if timed_out:
        wrk.kill()
    out = wrk.communicate()[0]
    elapsed = time.monotonic() - t0
    proxy_pids_after = procstat.tree(args.proxy_pid) if args.proxy_pid else []
    busy1 = procstat.system_busy_ticks()
    load_cpu1, proxy_cpu1 = procstat.cpu_busy_ticks(args.wrk_cpu), procstat.cpu_busy_ticks(args.proxy_cpu)
    proxy1 = procstat.cpu_ticks(proxy_pids_after)
    proxy_user1 = procstat.cpu_user_ticks(proxy_pids_after)
    origin1 = procstat.cpu_ticks(origin_pids)
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    after_origin = origin_counters(args.origin_status) if args.origin_status else None
    after_log = tls_log_counts(args.origin_log) if args.origin_log else None

    rec = parse_wrk(out)
    wrk_cpu_ticks = ((usage1.ru_utime + usage1.ru_stime) - (usage0.ru_utime + usage0.ru_stime)) * procstat.CLK_TCK
    proxy_ticks = proxy1 - proxy0 if proxy_pids else 0
    other = busy1 - busy0 - proxy_ticks - (origin1 - origin0) - wrk_cpu_ticks
    rec.update({
        "name": args.name, "body": args.body, "conns": args.conns, "rep": args.rep,
        "expect_read_errors": args.expect_read_errors, "seconds": args.seconds, "elapsed": round(elapsed, 2), "timed_out": timed_out,
        "proxy_cpu_s": proxy_ticks / procstat.CLK_TCK if proxy_pids else None,
        "cpu_user_us_per_req": ((proxy_user1 - proxy_user0) / procstat.CLK_TCK * 1e6 / rec["requests"])
        if proxy_pids and rec["requests"] else None,
        "cpu_us_per_req": (proxy_ticks / procstat.CLK_TCK * 1e6 / rec["requests"])
        if proxy_pids and rec["requests"] else None,
        "rss_idle_kib": rss_idle, "rss_load_kib": rss_peak if proxy_pids else None,
        "load_cpu_busy_pct": busy_pct(load_cpu0, load_cpu1),
        "proxy_cpu_busy_pct": busy_pct(proxy_cpu0, proxy_cpu1),
        "other_cpu_pct": round(max(0.0, other) * 100.0 / (elapsed * procstat.CLK_TCK * procstat.NCPU), 1),
        "origin_requests": (after_origin[1] - before_origin[1] - 1) if before_origin and after_origin else None,
        "origin_accepts": (after_origin[0] - before_origin[0] - 1) if before_origin and after_origin else None,
    })
    if args.sample_origin_conns:
        rec["origin_conns_peak"] = sampler.peak
    if before_log and after_log:
        rec["origin_tls_handshakes"] = after_log[0] - before_log[0]
        rec["origin_tls_resumed"] = after_log[1] - before_log[1]
    if rec["rps"] is None:
        rec["wrk_output"] = out[-2000:]
    with open(args.out, "a") as f:
        f.write(json.dumps(rec) + "\n")

    errs = sum(rec["errors"].values())
    p50 = f"{rec['p50_us']:.0f}us" if rec["p50_us"] is not None else "?"
    p99 = f"{rec['p99_us']:.0f}us" if rec["p99_us"] is not None else "?"
    cpu = f"{rec['cpu_us_per_req']:.1f}us/req" if rec["cpu_us_per_req"] is not None else "-"
    if rec.get("cpu_user_us_per_req") is not None:
        cpu += f" (user {rec['cpu_user_us_per_req']:.1f})"
    if "origin_tls_handshakes" in rec:
        cpu += f"  origin TLS handshakes {rec['origin_tls_handshakes']}, resumed {rec['origin_tls_resumed']}"
    print(f"  {args.name:<22} {args.body:>4} c={args.conns:<3} run {args.rep}: "
          f"{rec['rps'] or 0:>9.0f} req/s  p50 {p50:>8}  p99 {p99:>8}  cpu {cpu:>12}  "
          f"non2xx {rec['non2xx']}  errors {errs}  origin saw {rec['origin_requests']} req "
          f"on {rec['origin_accepts']} new conns  "
          f"other-load {rec['other_cpu_pct']}%  CPU busy load/proxy {rec['load_cpu_busy_pct']}/{rec['proxy_cpu_busy_pct']}%",
          flush=True)
    if rec["rps"] is None:
        print(out, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
