import Foundation

/// The admin root `/`: one self-contained page (inline CSS and JS, no external
/// asset, no CDN) showing the `/stats` table, refreshed every two seconds, with
/// a small p50/p95 latency chart per endpoint over the window's slices, and the
/// recent traced exchanges (``recentExchanges``).
public enum AdminPage {
    public static let contentType = "text/html; charset=utf-8"

    public static var bytes: [UInt8] { Array(html.utf8) }

    /// The page with `section` (HTML the caller made safe) before the recent
    /// exchanges: the mocks, replay and faults in force when it was asked for.
    public static func bytes(injected section: String) -> [UInt8] {
        Array(html.replacingOccurrences(of: recentExchangesMarker, with: section + recentExchangesMarker).utf8)
    }

    /// Where the recent exchanges begin in ``html``.
    static let recentExchangesMarker = "<h2 id=\"exchanges-title\">"

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>gateway</title>
        <style>
        :root { color-scheme: light dark; --fg:#1d2230; --muted:#6b7280; --bg:#fff; --line:#e5e7eb; --p50:#2563eb; --p95:#dc2626; --bad:#b91c1c; }
        @media (prefers-color-scheme: dark) { :root { --fg:#e5e7eb; --muted:#9ca3af; --bg:#111418; --line:#262b33; --p50:#60a5fa; --p95:#f87171; --bad:#f87171; } }
        body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 24px; }
        h1 { font-size: 18px; margin: 0 0 4px; }
        h2 { font-size: 16px; margin: 28px 0 4px; }
        td.curl { white-space: normal; max-width: 640px; }
        td.curl code { font-size: 12px; word-break: break-all; user-select: all; }
        #summary { color: var(--muted); margin-bottom: 16px; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
        th { text-align: right; font-weight: 600; color: var(--muted); cursor: pointer; user-select: none; }
        th.l, td.l { text-align: left; }
        td { text-align: right; }
        td.ep { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; max-width: 420px; overflow: hidden; text-overflow: ellipsis; }
        th.sorted::after { content: " \25BE"; }
        .bad { color: var(--bad); font-weight: 600; }
        .legend { color: var(--muted); font-size: 12px; margin-top: 10px; }
        .legend b.p50 { color: var(--p50); } .legend b.p95 { color: var(--p95); }
        svg { display: block; }
        #error { color: var(--bad); margin: 8px 0; }
        </style>
        </head>
        <body>
        <h1>gateway &middot; endpoints</h1>
        <div id="summary">loading&hellip;</div>
        <div id="error"></div>
        <table>
        <thead><tr>
        <th class="l" data-k="upstream">upstream</th><th class="l" data-k="method">method</th><th class="l" data-k="endpoint">endpoint</th>
        <th data-k="count">count</th><th data-k="rps">rps</th><th data-k="error_pct">err %</th>
        <th data-k="p50_ms">p50</th><th data-k="p95_ms">p95</th><th data-k="p99_ms">p99</th><th data-k="max_ms">max</th>
        <th data-k="retries">retries</th><th class="l">latency (window)</th>
        </tr></thead>
        <tbody id="rows"></tbody>
        </table>
        <div class="legend">Chart: <b class="p50">p50</b> and <b class="p95">p95</b> per slice of the window, oldest left. Percentiles are exact (HdrHistogram) over the sliding window. Prometheus metrics: <a href="/metrics">/metrics</a>, JSON: <a href="/stats">/stats</a>.</div>
        <div class="legend" id="device">A phone or another device: <code>gateway device</code> prints the address and port for its Wi-Fi proxy; then open <code>http://gateway.invalid/</code> in its browser (through the proxy: the gateway serves it to its own proxy clients) to install and trust the CA, with the steps for iOS and Android.</div>
        <script>
        "use strict";
        let sortKey = "p95_ms", desc = true, last = null;
        const text = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]));
        function ms(v) {
          if (v >= 1000) return (v / 1000).toFixed(v >= 10000 ? 1 : 2) + " s";
          if (v >= 100) return v.toFixed(0) + " ms";
          if (v >= 10) return v.toFixed(1) + " ms";
          return v.toFixed(2) + " ms";
        }
        function span(s) { s = Math.round(s); return s < 120 ? s + " s" : s < 7200 ? Math.floor(s / 60) + " min" : Math.floor(s / 3600) + " h"; }
        function chart(e, report) {
          const w = 160, h = 28, n = Math.max(1, Math.round(report.window_seconds / report.slice_seconds));
          const slices = e.slices || [];
          const top = Math.max(1e-6, ...slices.map((s) => s.p95_ms));
          const x = (s) => w - 4 - (s.age_seconds / report.slice_seconds) * ((w - 8) / Math.max(1, n - 1));
          const y = (v) => h - 3 - (v / top) * (h - 6);
          const line = (key, color) => {
            if (slices.length === 1) { const s = slices[0]; return `<circle cx="${x(s).toFixed(1)}" cy="${y(s[key]).toFixed(1)}" r="2" fill="${color}"/>`; }
            const pts = slices.map((s) => `${x(s).toFixed(1)},${y(s[key]).toFixed(1)}`).join(" ");
            return `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts}"/>`;
          };
          const css = getComputedStyle(document.documentElement);
          return `<svg width="${w}" height="${h}" role="img" aria-label="latency chart">` +
            `<line x1="0" y1="${h - 1}" x2="${w}" y2="${h - 1}" stroke="${css.getPropertyValue("--line")}"/>` +
            line("p50_ms", css.getPropertyValue("--p50")) + line("p95_ms", css.getPropertyValue("--p95")) +
            `<title>max p95 in window ${ms(top)}</title></svg>`;
        }
        function render() {
          const report = last; if (!report) return;
          const rows = report.endpoints.slice().sort((a, b) => {
            const va = a[sortKey], vb = b[sortKey];
            const c = typeof va === "string" ? va.localeCompare(vb) : va - vb;
            return desc ? -c : c;
          });
          const total = report.endpoints.reduce((n, e) => n + e.count, 0);
          document.getElementById("summary").textContent =
            `last ${span(report.window_seconds)} · ${report.endpoints.length} endpoint(s) · ${total} request(s) · uptime ${span(report.uptime_seconds)} · refreshed ${new Date().toLocaleTimeString()}`;
          document.getElementById("rows").innerHTML = rows.length === 0
            ? `<tr><td class="l" colspan="12">No requests in the window yet.</td></tr>`
            : rows.map((e) => `<tr>
              <td class="l">${text(e.upstream)}</td><td class="l">${text(e.method)}</td><td class="l ep" title="${text(e.endpoint)}">${text(e.endpoint)}</td>
              <td>${e.count}</td><td>${e.rps.toFixed(2)}</td><td class="${e.error_pct > 0 ? "bad" : ""}">${e.error_pct.toFixed(1)}</td>
              <td>${ms(e.p50_ms)}</td><td>${ms(e.p95_ms)}</td><td>${ms(e.p99_ms)}</td><td>${ms(e.max_ms)}</td>
              <td>${e.retries}</td><td class="l">${chart(e, report)}</td></tr>`).join("");
          document.querySelectorAll("th[data-k]").forEach((th) => th.classList.toggle("sorted", th.dataset.k === sortKey));
        }
        async function refresh() {
          try {
            const response = await fetch("/stats", { cache: "no-store" });
            if (!response.ok) throw new Error("HTTP " + response.status);
            last = await response.json();
            document.getElementById("error").textContent = "";
            render();
          } catch (err) {
            document.getElementById("error").textContent = "cannot read /stats: " + err.message;
          }
        }
        document.querySelectorAll("th[data-k]").forEach((th) => th.addEventListener("click", () => {
          const k = th.dataset.k;
          if (k === sortKey) desc = !desc; else { sortKey = k; desc = !["upstream", "method", "endpoint"].includes(k); }
          render();
        }));
        refresh();
        setInterval(refresh, 2000);
        </script>
        \#(recentExchanges)
        </body>
        </html>
        """#
}
