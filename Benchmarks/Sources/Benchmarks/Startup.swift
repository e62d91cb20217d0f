import Foundation

/// Workload 7: the release `snippetbox` binary on a seeded store, as a child process: the time from
/// starting it to its first answer, and its memory (VmHWM, VmRSS from /proc/<pid>/status).
struct StartupBenchmark {
    let binary: URL
    let dataDirectory: URL
    let rounds: Int
    let requestsAfterStart: Int
    let results: Results

    func run() async throws {
        print("Startup: \(binary.path) on \(dataDirectory.path), \(rounds) rounds")
        for round in 0..<rounds {
            let port = 18_000 + Int(getpid() % 1000) + round
            let process = Process()
            process.executableURL = binary
            var environment = ProcessInfo.processInfo.environment
            environment["DATA_DIR"] = dataDirectory.path
            environment["PORT"] = String(port)
            environment["HOST"] = "127.0.0.1"
            environment["LOG_LEVEL"] = "warning"
            if environment["ADMIN_PASSWORD"] == nil { environment["ADMIN_PASSWORD"] = benchmarkAdminPassword }
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            let start = now()
            try process.run()
            defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
            var answered: Double?
            var firstStatus = 0
            while now() - start < 60, process.isRunning {
                if let status = try? HTTPGet.status(port: UInt16(port), path: "/snippets") {
                    answered = now() - start
                    firstStatus = status
                    break
                }
                usleep(2_000)
            }
            guard let answered else { throw BenchmarkError("snippetbox did not answer within 60 s") }
            let atStart = ProcStatus(pid: process.processIdentifier)
            let password = environment["ADMIN_PASSWORD"] ?? benchmarkAdminPassword
            let cookie = try HTTPGet.logIn(port: UInt16(port), password: password)
            let firstPage = try await timed { try HTTPGet.request(port: UInt16(port), path: "/snippets", cookie: cookie) }
            guard firstPage.value.status == 200 else { throw BenchmarkError("list page answered \(firstPage.value.status)") }
            let untilList = now() - start
            for _ in 0..<requestsAfterStart {
                let status = try HTTPGet.status(port: UInt16(port), path: "/snippets", cookie: cookie)
                guard status == 200 else { throw BenchmarkError("list page answered \(status)") }
            }
            let afterRequests = ProcStatus(pid: process.processIdentifier)
            results.add("7 startup", "7 start → first answer (GET /snippets: \(firstStatus))", "snippetbox", .once, [answered])
            results.add("7 startup", "7 start → first list page (incl. log-in: \(cookie == nil ? "none" : "bcrypt"))", "snippetbox", .once, [untilList])
            results.add("7 startup", "7 first list page (cold)", "snippetbox", .once, [firstPage.seconds])
            results.add("7 startup", "7 peak RSS (VmHWM) at first answer", "snippetbox", .bytes, [atStart.hwm])
            results.add("7 startup", "7 peak RSS (VmHWM) after \(requestsAfterStart) list pages", "snippetbox", .bytes, [afterRequests.hwm])
            results.add("7 startup", "7 RSS (VmRSS) after \(requestsAfterStart) list pages", "snippetbox", .bytes, [afterRequests.rss])
            print("  round \(round + 1): answered in \(Results.format(answered, .once)), VmHWM \(Results.format(afterRequests.hwm, .bytes))")
        }
    }
}

/// VmHWM and VmRSS of a process, in bytes.
struct ProcStatus {
    var hwm = Double.nan
    var rss = Double.nan
    init(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kilobytes = Double(parts[1]) else { continue }
            if parts[0] == "VmHWM:" { hwm = kilobytes * 1024 }
            if parts[0] == "VmRSS:" { rss = kilobytes * 1024 }
        }
    }
}

/// A blocking HTTP/1.1 client on loopback (one request per connection): enough to poll a starting
/// server, log in and fetch pages.
enum HTTPGet {
    struct Answer {
        let status: Int
        let headers: [(String, String)]
        let body: String
        func cookies() -> [String] {
            headers.filter { $0.0.lowercased() == "set-cookie" }.compactMap { $0.1.split(separator: ";").first.map(String.init) }
        }
    }

    static func status(port: UInt16, path: String, cookie: String? = nil) throws -> Int {
        try request(port: port, path: path, cookie: cookie).status
    }

    static func request(port: UInt16, method: String = "GET", path: String, cookie: String? = nil, form: String? = nil) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchmarkError("socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchmarkError("connect") }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let cookie { request += "Cookie: \(cookie)\r\n" }
        if let form {
            request += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n"
        }
        request += "\r\n" + (form ?? "")
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw BenchmarkError("send") }
            sent += count
        }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let read = recv(fd, &buffer, buffer.count, 0)
            if read <= 0 { break }
            response += buffer[0..<read]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1."), let code = Int(text.dropFirst(9).prefix(3)) else { throw BenchmarkError("no HTTP answer") }
        let parts = text.components(separatedBy: "\r\n\r\n")
        let headers = parts[0].components(separatedBy: "\r\n").dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Answer(status: code, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// nil when the server has no login page; otherwise logs in as admin and returns the cookie.
    static func logIn(port: UInt16, password: String) throws -> String? {
        let page = try request(port: port, path: "/login")
        if page.status == 404 { return nil }
        var cookies = page.cookies()
        let csrf = InProcessClient.hiddenInput("csrf", in: page.body) ?? ""
        let form = "username=admin&password=\(password.urlFormEscaped)&csrf=\(csrf.urlFormEscaped)"
        let answer = try request(port: port, method: "POST", path: "/login",
                                 cookie: cookies.isEmpty ? nil : cookies.joined(separator: "; "), form: form)
        guard answer.status < 400 else { throw BenchmarkError("login answered \(answer.status)") }
        let fresh = answer.cookies()
        let names = Set(fresh.map { $0.split(separator: "=")[0] })
        cookies = cookies.filter { !names.contains($0.split(separator: "=")[0]) } + fresh
        return cookies.joined(separator: "; ")
    }
}
