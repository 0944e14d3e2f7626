"""Stream a large body through a proxy with curl and sample the proxy's RSS every 100 ms.

Prints one JSON object (RSS in KiB, summed over the proxy's processes).
"""
import argparse
import json
import subprocess
import time

import procstat


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proxy", required=True, help="host:port")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--max-time", type=int, default=180)
    ap.add_argument("--curl-cpu", default="0")
    args = ap.parse_args()

    pids = procstat.tree(args.pid)
    before = procstat.rss_kib(pids)
    cmd = ["taskset", "-c", args.curl_cpu, "curl", "-sS", "-x", f"http://{args.proxy}", "-o", "/dev/null",
           "--max-time", str(args.max_time), "-w", "%{http_code} %{size_download}", args.url]
    t0 = time.monotonic()
    curl = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    while curl.poll() is None and time.monotonic() < t0 + args.max_time + 10:
        samples.append(procstat.rss_kib(pids))
        time.sleep(0.1)
    if curl.poll() is None:
        curl.kill()
    stdout, stderr = curl.communicate()
    elapsed = time.monotonic() - t0
    time.sleep(0.5)
    after = procstat.rss_kib(procstat.tree(args.pid))
    parts = stdout.split()
    code, size = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, 0)
    n = len(samples)
    print(json.dumps({
        "http_code": code, "bytes": size, "seconds": round(elapsed, 2), "curl_rc": curl.returncode,
        "curl_error": stderr.strip()[-300:],
        "mib_per_s": round(size / elapsed / 1048576, 1) if elapsed else None,
        "rss_before_kib": before, "rss_peak_kib": max(samples, default=before),
        # peak over the first and the last quarter of the transfer: flat memory has them equal
        "rss_first_quarter_peak_kib": max(samples[: max(1, n // 4)], default=before),
        "rss_last_quarter_peak_kib": max(samples[-max(1, n // 4):], default=before),
        "rss_after_kib": after, "samples": n,
    }))


if __name__ == "__main__":
    main()
