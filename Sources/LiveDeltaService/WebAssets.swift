import MicroHTTP

/// The files the server serves to browsers: the live page, its script and style, and the
/// JavaScript client's modules, each compiled in from the repository (the EmbedAssets plugin).
///
/// Each goes with headers that keep a page from being turned against its reader: a
/// Content-Security-Policy that lets it run scripts and styles from this server only, connect
/// only to it and be framed by no one; `X-Content-Type-Options: nosniff`, so that a browser
/// takes each file as the type it is said to be; and a `Referrer-Policy` that sends no address
/// (a session id, a token in a fragment) to another site.
enum WebAssets {
    static let securityHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache"),
    ]

    private static func response(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type)] + securityHeaders, body: Array(text.utf8))
    }

    static var page: HTTPResponse { response(LivePage.html, type: "text/html; charset=utf-8") }

    /// The files under `/clients/`, by name.
    private static let files: [String: (text: String, type: String)] = [
        "livedelta.js": (ClientModule.javascript, "text/javascript; charset=utf-8"),
        "appliers.js": (ClientAppliersModule.javascript, "text/javascript; charset=utf-8"),
        "dom.js": (ClientDOMModule.javascript, "text/javascript; charset=utf-8"),
        "live.js": (LivePageScript.javascript, "text/javascript; charset=utf-8"),
        "live.css": (LivePageStyle.css, "text/css; charset=utf-8"),
    ]

    static var names: [String] { files.keys.sorted() }

    static func file(named name: Substring) -> HTTPResponse? {
        files[String(name)].map { response($0.text, type: $0.type) }
    }
}
