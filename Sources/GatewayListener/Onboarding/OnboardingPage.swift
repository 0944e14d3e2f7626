/// The onboarding page's HTML: plain, readable on a phone, no script, every
/// value escaped. What it says is what the README's "Use it from a phone" says.
enum OnboardingPage {
    static func html(authority: OnboardingSite.Authority?, proxyAuthRequired: Bool) -> String {
        let body: String
        if let authority {
            body = """
                <p>This phone reaches the gateway. To see and shape its HTTPS traffic, trust the gateway's CA:</p>
                <p class="fp">SHA-256 <code>\(escaped(authority.fingerprint))</code><br><small>\(escaped(authority.name)); \
                compare with <code>gateway ca export</code> on the computer running the gateway.</small></p>
                <h2>iPhone, iPad</h2>
                <ol>
                <li>Open this page in Safari and tap <a href="/gateway.mobileconfig">the configuration profile</a>; allow the download.</li>
                <li>Settings, General, VPN &amp; Device Management (or the "Profile Downloaded" row at the top of Settings): install it.</li>
                <li>Settings, General, About, Certificate Trust Settings: turn on full trust for "\(escaped(authority.name))".</li>
                </ol>
                <h2>Android</h2>
                <ol>
                <li>Download <a href="/ca.crt">the CA certificate (gateway-ca.crt)</a>.</li>
                <li>Settings, Security (or Security &amp; privacy), More security settings, Encryption &amp; credentials, \
                Install a certificate, CA certificate: pick gateway-ca.crt.</li>
                <li>Apps trust user-installed CAs only when they opt in: a debug build of your app needs \
                <code>res/xml/network_security_config.xml</code> with
                <pre>&lt;network-security-config&gt;
                  &lt;debug-overrides&gt;
                    &lt;trust-anchors&gt;
                      &lt;certificates src="user" /&gt;
                    &lt;/trust-anchors&gt;
                  &lt;/debug-overrides&gt;
                &lt;/network-security-config&gt;</pre>
                and <code>android:networkSecurityConfig="@xml/network_security_config"</code> on its <code>&lt;application&gt;</code>. \
                Chrome trusts user CAs without it.</li>
                </ol>
                <h2>Other clients</h2>
                <p><a href="/ca.pem">gateway-ca.pem</a> (PEM) for tools that take a CA file.</p>
                """
        } else {
            body = """
                <p>This phone reaches the gateway. No upstream has <code>intercept: true</code>, so there is no CA to \
                install: plain HTTP and HTTPS tunnels already work. Add <code>intercept: true</code> to an upstream \
                to see and shape its HTTPS traffic, then open this page again.</p>
                """
        }
        let auth = proxyAuthRequired
            ? "<p><small>Proxy authentication is on. iOS: turn on Authentication in the Wi-Fi proxy settings with the user and "
                + "password. Android has no such field: Chrome asks for them, apps only when built to answer the proxy "
                + "(OkHttp's <code>proxyAuthenticator</code>).</small></p>"
            : ""
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Gateway: set up this device</title>
            <style>body{font:16px/1.45 -apple-system,system-ui,sans-serif;margin:1em;max-width:40em}\
            code,pre{font-size:13px;background:#f3f3f3;padding:0 .2em;overflow-x:auto}.fp code{word-break:break-all}\
            li{margin:.4em 0}</style>
            </head><body>
            <h1>Set up this device</h1>
            \(body)
            \(auth)
            <p><small>Served by the gateway itself at \(OnboardingSite.url) to its proxy clients.</small></p>
            </body></html>

            """
    }

    static func escaped(_ text: String) -> String {
        MobileConfigProfile.escaped(text)
    }
}
