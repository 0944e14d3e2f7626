"""The gateway configs of bench.sh's config-size rows (issue 40), generated at bench time.

    config_size.py VARIANT --proxy-port P --admin-port A --origin-port O --dir D [--log-level L] > gateway.yaml
    config_size.py --request-host VARIANT     # the host the load asks for through VARIANT

Every variant sends the load's requests to the nginx origin through one upstream's
`origin:` (the request names a host, the upstream rewrites it to 127.0.0.1:O), so
the rows differ only in what the gateway has to look through to find that upstream:

    1           one upstream, u1499.bench.test: the baseline of the other rows
    500-exact   500 upstreams, u1000.bench.test ... u1499.bench.test; the request for the last
    500-suffix  500 upstreams, *.u1000.bench.test ... *.u1499.bench.test; the request for
                www.u1499.bench.test (the last)
    2000-deny   the one upstream of `1` and 2,000 deny rules that the request passes: 1,000
                names (500 exact, 500 *.suffix) and 1,000 CIDR ranges (800 IPv4, 200 IPv6)
    1-faults-idle  the one upstream of `1` with fault rules that never fire (rate 0, toward
                the app and toward the policies, on the endpoint asked for and on all): what
                configured faults cost a request they leave alone (issue 55: within 1.05x)

The names all have the same length, so that a scan compares their bytes instead of
passing over them by length.
"""
import argparse
import sys

VARIANTS = ("1", "500-exact", "500-suffix", "2000-deny", "1-faults-idle")
LAST = 1499  # u1000 ... u1499: 500 names of one length


def request_host(variant):
    return f"www.u{LAST}.bench.test" if variant == "500-suffix" else f"u{LAST}.bench.test"


def upstream(number, origin_port, wildcard=False):
    host = f"{'*.' if wildcard else ''}u{number}.bench.test"
    lines = [f"  - name: u{number}", f'    hosts: ["{host}"]']
    if number == LAST:
        lines.append(f"    origin: http://127.0.0.1:{origin_port}")
    return lines


def deny_rules():
    rules = []
    for number in range(500):
        rules.append(f"d{1000 + number}.deny.test")
        rules.append(f"*.w{1000 + number}.deny.test")
    for number in range(1000):
        # 10.0.0.0/24 ... 10.3.248.0/24 and fd00:N::/48: none holds 127.0.0.1, the origin the pool connects to.
        rules.append(f"fd00:{number:x}::/48" if number % 5 == 4 else f"10.{number // 250}.{number % 250}.0/24")
    return rules


def idle_faults():
    """Rules of every kind, none of which fires."""
    return [
        "    faults:",
        "      seed: 7",
        "      rules:",
        "        - endpoint: GET /{file}",
        "          rate: 0",
        "          error: {status: 429, retry_after: 2s}",
        "        - rate: 0",
        "          latency: {min: 1s, max: 2s}",
        "        - rate: 0",
        "          slow_body: {bytes_per_second: 1KiB}",
        "        - toward: policies",
        "          rate: 0",
        "          error: 503",
    ]


def config(variant, args):
    lines = [
        f"# bench.sh config-size row: {variant} (scripts/bench/config_size.py)",
        "listen:",
        f"  proxy: 127.0.0.1:{args.proxy_port}",
        f"  admin: 127.0.0.1:{args.admin_port}",
        f"log_level: {args.log_level}",
        f"state_dir: {args.dir}/gateway-state",
    ]
    if variant == "2000-deny":
        lines.append("access:")
        lines.append("  deny:")
        lines += [f'    - "{rule}"' for rule in deny_rules()]
    lines.append("upstreams:")
    if variant in ("500-exact", "500-suffix"):
        for number in range(LAST - 499, LAST + 1):
            lines += upstream(number, args.origin_port, wildcard=variant == "500-suffix")
    else:
        lines += upstream(LAST, args.origin_port)
    if variant == "1-faults-idle":
        lines += idle_faults()
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variant", choices=VARIANTS)
    ap.add_argument("--request-host", action="store_true", help="print the host the load requests, and exit")
    ap.add_argument("--proxy-port", type=int)
    ap.add_argument("--admin-port", type=int)
    ap.add_argument("--origin-port", type=int)
    ap.add_argument("--dir")
    ap.add_argument("--log-level", default="warning")
    args = ap.parse_args()
    if args.request_host:
        print(request_host(args.variant))
        return
    missing = [name for name in ("proxy_port", "admin_port", "origin_port", "dir") if getattr(args, name) is None]
    if missing:
        ap.error("missing " + ", ".join("--" + name.replace("_", "-") for name in missing))
    sys.stdout.write(config(args.variant, args))


if __name__ == "__main__":
    main()
