/// The page's "recent exchanges" section: the last traced exchanges from
/// `/traces` (debug mode), each with its curl line to copy, and a link to
/// download them as HAR from `/traces.har`. Uses the first script's `text`
/// and `ms` helpers; refreshed with the stats.
extension AdminPage {
    static let recentExchanges = #"""
        <h2 id="exchanges-title">recent exchanges</h2>
        <div id="exchanges-summary" class="legend">loading&hellip;</div>
        <table id="exchanges-table">
        <thead><tr>
        <th class="l">time</th><th class="l">method</th><th class="l">endpoint</th><th>status</th><th>attempts</th><th>duration</th><th class="l">curl</th>
        </tr></thead>
        <tbody id="exchanges"></tbody>
        </table>
        <script>
        "use strict";
        function copyLine(button) {
          const line = button.parentElement.querySelector("code").textContent;
          const done = () => { button.textContent = "copied"; setTimeout(() => { button.textContent = "copy"; }, 1500); };
          if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(line).then(done); return; }
          const area = document.createElement("textarea");
          area.value = line; document.body.appendChild(area); area.select();
          document.execCommand("copy"); area.remove(); done();
        }
        async function refreshExchanges() {
          const summary = document.getElementById("exchanges-summary");
          try {
            const response = await fetch("/traces", { cache: "no-store" });
            if (!response.ok) throw new Error("HTTP " + response.status);
            const report = await response.json();
            const rows = report.exchanges;
            const har = `<a id="har-download" href="/traces.har" download="gateway-traces.har">download as HAR</a>`;
            summary.innerHTML = report.debug
              ? `last ${rows.length} of at most ${report.capacity} traced exchange(s), newest first &middot; ${har}`
              : `Traces are off: run with <code>debug: true</code> (or <code>gateway run --debug</code>) to list exchanges here.` + (rows.length ? ` Earlier ones: ${har}` : "");
            document.getElementById("exchanges").innerHTML = rows.length === 0
              ? `<tr><td class="l" colspan="7">No traced exchange yet.</td></tr>`
              : rows.map((e) => `<tr class="exchange" data-id="${text(e.id)}">
                <td class="l">${text(new Date(e.time).toLocaleTimeString())}</td><td class="l">${text(e.method)}</td>
                <td class="l ep" title="${text(e.endpoint)}">${text(e.endpoint)}</td>
                <td class="${e.status === null || e.status >= 400 || e.error ? "bad" : ""}">${e.status === null ? "&ndash;" : e.status}${e.error ? " " + text(e.error) : ""}</td>
                <td>${e.attempts}</td><td>${ms(e.duration_ms)}</td>
                <td class="l curl"><button type="button" onclick="copyLine(this)">copy</button> <code>${text(e.curl)}</code></td></tr>`).join("");
          } catch (err) {
            summary.textContent = "cannot read /traces: " + err.message;
          }
        }
        refreshExchanges();
        setInterval(refreshExchanges, 2000);
        </script>
        """#
}
