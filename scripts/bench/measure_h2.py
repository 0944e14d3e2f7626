"""One timed run of the HTTP/2 load client (Benchmarks/Benchmarks/H2ProxyLoad) against a
target, with the proxy's CPU time and RSS sampled from /proc, as measure.py does for wrk.
Also for the clients that print the same JSON report: tls_connect_load.py (new TLS
connections: requests = connections) and ws_load.py (WebSocket messages: requests = messages).

Appends one JSON object to --out (the fields of measure.py's records, plus streams, the
origin's peak open connections and the client's own report) and prints a one-line summary.
Everything after `--` goes to the client (--proxy/--direct, --target, --ca, --path).
"""
import argparse
import json
import resource
import subprocess
import sys
import time

import procstat
from measure import OpenConnectionsSampler, busy_pct, origin_counters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--streams", type=int, required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--rep", type=int, default=1)
    ap.add_argument("--client", required=True,
                    help="the H2ProxyLoad binary, or tls_connect_load.py or ws_load.py (executable, same report)")
    ap.add_argument("--proxy-pid", type=int, default=0)
    ap.add_argument("--origin-pid", type=int, default=0)
    ap.add_argument("--origin-status", default="")
    ap.add_argument("--load-cpu", default="0")
    ap.add_argument("--proxy-cpu", default="1", help="the CPU the proxy is pinned to (its busy share is recorded)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--warmup", type=int, default=0,
                    help="seconds of the same load first, unmeasured (after the idle RSS is read)")
    ap.add_argument("client_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    client_args = args.client_args[1:] if args.client_args[:1] == ["--"] else args.client_args

    def command(seconds):
        return ["taskset", "-c", args.load_cpu, args.client, *client_args, "--connections", str(args.conns),
                "--streams", str(args.streams), "--seconds", str(seconds)]

    proxy_pids = procstat.tree(args.proxy_pid)
    origin_pids = procstat.tree(args.origin_pid)
    rss_idle = procstat.rss_kib(proxy_pids) if proxy_pids else None
    if args.warmup > 0:
        subprocess.run(command(args.warmup), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=args.warmup + 30, check=False)
    before_origin = origin_counters(args.origin_status) if args.origin_status else None

    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, proxy0, origin0 = procstat.system_busy_ticks(), procstat.cpu_ticks(proxy_pids), procstat.cpu_ticks(origin_pids)
    proxy_user0 = procstat.cpu_user_ticks(proxy_pids)
    load_cpu0, proxy_cpu0 = procstat.cpu_busy_ticks(args.load_cpu), procstat.cpu_busy_ticks(args.proxy_cpu)
    t0 = time.monotonic()
    client = subprocess.Popen(command(args.seconds), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rss_peak = rss_idle or 0
    sampler = OpenConnectionsSampler(args.origin_status or None)
    deadline = t0 + args.seconds + 30
    while client.poll() is None and time.monotonic() < deadline:
        if proxy_pids:
            rss_peak = max(rss_peak, procstat.rss_kib(proxy_pids))
        sampler.tick()
        time.sleep(0.1)
    timed_out = client.poll() is None
    if timed_out:
        client.kill()
    out, err = client.communicate()
    elapsed = time.monotonic() - t0
    proxy_pids_after = procstat.tree(args.proxy_pid) if args.proxy_pid else []
    busy1 = procstat.system_busy_ticks()
    load_cpu1, proxy_cpu1 = procstat.cpu_busy_ticks(args.load_cpu), procstat.cpu_busy_ticks(args.proxy_cpu)
    proxy1 = procstat.cpu_ticks(proxy_pids_after)
    proxy_user1 = procstat.cpu_user_ticks(proxy_pids_after)
    origin1 = procstat.cpu_ticks(origin_pids)
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    after_origin = origin_counters(args.origin_status) if args.origin_status else None

    try:
        report = json.loads(out.strip().splitlines()[-1])
    except (IndexError, ValueError):
        report = None
    requests = report["requests"] if report else 0
    client_cpu_ticks = ((usage1.ru_utime + usage1.ru_stime) - (usage0.ru_utime + usage0.ru_stime)) * procstat.CLK_TCK
    proxy_ticks = proxy1 - proxy0 if proxy_pids else 0
    other = busy1 - busy0 - proxy_ticks - (origin1 - origin0) - client_cpu_ticks
    latency = (report or {}).get("latency_us") or {}
    rec = {
        "name": args.name, "body": args.body, "conns": args.conns, "streams": args.streams, "rep": args.rep,
        "rps": report["requests_per_second"] if report and requests else None, "requests": requests,
        "p50_us": latency.get("p50"), "p99_us": latency.get("p99"),
        "non2xx": report["non2xx"] if report else 0,
        "errors": dict(report["errors"]) if report else {"client": 1},
        "seconds": args.seconds, "elapsed": round(elapsed, 2), "timed_out": timed_out,
        "proxy_cpu_s": proxy_ticks / procstat.CLK_TCK if proxy_pids else None,
        "cpu_user_us_per_req": ((proxy_user1 - proxy_user0) / procstat.CLK_TCK * 1e6 / requests)
        if proxy_pids and requests else None,
        "cpu_us_per_req": (proxy_ticks / procstat.CLK_TCK * 1e6 / requests) if proxy_pids and requests else None,
        "rss_idle_kib": rss_idle, "rss_load_kib": rss_peak if proxy_pids else None,
        "load_cpu_busy_pct": busy_pct(load_cpu0, load_cpu1),
        "proxy_cpu_busy_pct": busy_pct(proxy_cpu0, proxy_cpu1),
        "other_cpu_pct": round(max(0.0, other) * 100.0 / (elapsed * procstat.CLK_TCK * procstat.NCPU), 1),
        "origin_requests": (after_origin[1] - before_origin[1] - 1) if before_origin and after_origin else None,
        "origin_accepts": (after_origin[0] - before_origin[0] - 1) if before_origin and after_origin else None,
        "origin_conns_peak": sampler.peak,
        # The load client's own CPU per request (its processes, reaped): how near it ran to its ceiling.
        "client_cpu_us_per_req": round(client_cpu_ticks / procstat.CLK_TCK * 1e6 / requests, 2) if requests else None,
        "client": report,
    }
    if report is None:
        rec["client_output"] = (out[-1000:] + err[-1000:])
    with open(args.out, "a") as f:
        f.write(json.dumps(rec) + "\n")

    errs = sum(rec["errors"].values())
    p50 = f"{rec['p50_us']:.0f}us" if rec["p50_us"] is not None else "?"
    p99 = f"{rec['p99_us']:.0f}us" if rec["p99_us"] is not None else "?"
    cpu = f"{rec['cpu_us_per_req']:.1f}us/req" if rec["cpu_us_per_req"] is not None else "-"
    if rec.get("cpu_user_us_per_req") is not None:
        cpu += f" (user {rec['cpu_user_us_per_req']:.1f})"
    print(f"  {args.name:<22} {args.body:>4} c={args.conns}x{args.streams} run {args.rep}: "
          f"{rec['rps'] or 0:>9.0f} req/s  p50 {p50:>8}  p99 {p99:>8}  cpu {cpu:>12}  "
          f"non2xx {rec['non2xx']}  errors {errs}  origin saw {rec['origin_requests']} req "
          f"on {rec['origin_accepts']} new conns, at most {rec['origin_conns_peak']} open  "
          f"other-load {rec['other_cpu_pct']}%  CPU busy load/proxy {rec['load_cpu_busy_pct']}/{rec['proxy_cpu_busy_pct']}%",
          flush=True)
    if report is None:
        print(out + err, file=sys.stderr)
        sys.exit(1)
    if err.strip():
        print(err.strip()[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
