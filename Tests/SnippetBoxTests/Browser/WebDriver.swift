import Foundation
import Vapor

/// A small client for the W3C WebDriver protocol, enough to drive headless Chromium through
/// `chromedriver` in the browser journeys: open pages, find elements, click, type, read, screenshot.
final class WebDriver: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let driverProcess: Process
    private let endpoint: String
    private let client: any Client
    private(set) var sessionID = ""

    /// Starts `chromedriver` on a free port and opens a headless Chromium session. Requests go through
    /// the app's HTTP client (Foundation's URLSession hangs in async tests on Linux).
    init(javaScript: Bool, client: any Client) async throws {
        self.client = client
        guard let driverPath = Self.which("chromedriver"), let browserPath = Self.which("chromium") else {
            throw Failure(description: "chromium and chromedriver are needed for the browser tests: "
                + "run Tests/run-all-tests.sh, which installs them (apt-get install chromium chromium-driver)")
        }
        let port = Int.random(in: 20_000...40_000)
        endpoint = "http://127.0.0.1:\(port)"
        driverProcess = Process()
        driverProcess.executableURL = URL(fileURLWithPath: driverPath)
        driverProcess.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
        driverProcess.standardOutput = FileHandle.nullDevice
        driverProcess.standardError = FileHandle.nullDevice
        try driverProcess.run()

        var ready = false
        for _ in 0..<100 {
            if let status = try? await request("GET", "/status"), (status["value"] as? [String: Any])?["ready"] as? Bool == true {
                ready = true
                break
            }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        guard ready else {
            Self.kill(driverProcess)
            throw Failure(description: "chromedriver did not start on port \(port)")
        }
        var options: [String: Any] = [
            "binary": browserPath,
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"],
        ]
        if !javaScript {
            options["prefs"] = ["profile.managed_default_content_settings.javascript": 2]
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": options]]]
        let session = try await request("POST", "/session", body: capabilities)
        guard let value = session["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            Self.kill(driverProcess)
            throw Failure(description: "chromedriver did not open a session: \(session)")
        }
        sessionID = id
    }

    func quit() async {
        _ = try? await request("DELETE", "/session/\(sessionID)")
        Self.kill(driverProcess)
    }

    /// Stops chromedriver for sure: it may ignore SIGTERM while a browser is starting.
    private static func kill(_ process: Process) {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    // MARK: Commands

    func open(_ url: String) async throws {
        _ = try await command("POST", "url", ["url": url])
    }

    var currentURL: String {
        get async throws { try await command("GET", "url") as? String ?? "" }
    }

    var pageSource: String {
        get async throws { try await command("GET", "source") as? String ?? "" }
    }

    var title: String {
        get async throws { try await command("GET", "title") as? String ?? "" }
    }

    /// The first element matching a CSS selector.
    func element(_ selector: String) async throws -> String {
        let value = try await command("POST", "element", ["using": "css selector", "value": selector])
        guard let element = value as? [String: Any], let id = element.values.first as? String else {
            throw Failure(description: "no element matches \(selector)")
        }
        return id
    }

    func elements(_ selector: String) async throws -> [String] {
        let value = try await command("POST", "elements", ["using": "css selector", "value": selector])
        return (value as? [[String: Any]] ?? []).compactMap { $0.values.first as? String }
    }

    func click(_ selector: String) async throws {
        let id = try await element(selector)
        _ = try await command("POST", "element/\(id)/click", [:])
    }

    /// Types into a field after clearing it (a file input gets the file's path).
    func type(_ text: String, into selector: String, clearing: Bool = true) async throws {
        let id = try await element(selector)
        if clearing { _ = try await command("POST", "element/\(id)/clear", [:]) }
        _ = try await command("POST", "element/\(id)/value", ["text": text])
    }

    func attach(_ path: String, to selector: String) async throws {
        let id = try await element(selector)
        _ = try await command("POST", "element/\(id)/value", ["text": path])
    }

    func text(of selector: String) async throws -> String {
        let id = try await element(selector)
        return try await command("GET", "element/\(id)/text") as? String ?? ""
    }

    func isDisplayed(_ selector: String) async throws -> Bool {
        let id = try await element(selector)
        return try await command("GET", "element/\(id)/displayed") as? Bool ?? false
    }

    /// Chooses the option of a `<select>` whose visible text is `label`.
    func select(_ label: String, in selector: String) async throws {
        for option in try await elements("\(selector) option") {
            if (try await command("GET", "element/\(option)/text") as? String)?.trimmingCharacters(in: .whitespaces) == label {
                _ = try await command("POST", "element/\(option)/click", [:])
                return
            }
        }
        throw Failure(description: "\(selector) has no option \(label)")
    }

    func screenshot(to url: URL) async throws {
        guard let base64 = try await command("GET", "screenshot") as? String, let data = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot")
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    // MARK: Transport

    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        let response = try await request(method, "/session/\(sessionID)/\(path)", body: body)
        if let value = response["value"] as? [String: Any], let error = value["error"] as? String {
            throw Failure(description: "\(method) \(path): \(error): \(value["message"] ?? "")")
        }
        return response["value"]
    }

    private func request(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> [String: Any] {
        var headers = HTTPHeaders()
        var buffer: ByteBuffer?
        if let body {
            headers.contentType = .json
            buffer = ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))
        }
        let request = ClientRequest(method: HTTPMethod(rawValue: method), url: URI(string: endpoint + path), headers: headers, body: buffer)
        let response = try await client.send(request)
        guard let data = response.body.map({ Data(buffer: $0) }) else { return [:] }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    private static func which(_ name: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        return (paths + ["/usr/bin", "/usr/lib/chromium"]).map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
