/// A static file an application serves through the coordinator's gateway (a page, a script,
/// a stylesheet), held in memory.
///
/// The gateway is generic: it knows the root only as JSON. An application that wants a page for
/// people supplies it as assets (the email browser's page at `/` is one), so the page ships in
/// the application's own module, needs no build step, and the coordinator serves it from the
/// same origin as the API it calls.
public struct WebAsset: Sendable, Equatable {
    /// The path it is served at, starting with `/` (`/` itself for the index page).
    public var path: String
    /// Its `Content-Type` (e.g. `text/html; charset=utf-8`).
    public var contentType: String
    /// Its bytes.
    public var body: [UInt8]

    /// Creates an asset from its text (UTF-8).
    public init(path: String, contentType: String, text: String) {
        self.path = path
        self.contentType = contentType
        self.body = Array(text.utf8)
    }
}
