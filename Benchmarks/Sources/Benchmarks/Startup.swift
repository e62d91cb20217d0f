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
            for _ in 0..<requestsAfterStart { _ = try HTTPGet.status(port: UInt16(port), path: "/snippets") }
            let afterRequests = ProcStatus(pid: process.processIdentifier)
            results.add("7 startup", "7 start → first answer (GET /snippets: \(firstStatus))", "snippetbox", .once, [answered])
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

/// A blocking HTTP/1.1 GET on loopback that reads the whole answer: enough to poll a starting server.
enum HTTPGet {
    static func status(port: UInt16, path: String) throws -> Int {
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
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let read = recv(fd, &buffer, buffer.count, 0)
            if read <= 0 { break }
            response += buffer[0..<read]
        }
        let head = String(decoding: response.prefix(64), as: UTF8.self)
        guard head.hasPrefix("HTTP/1."), let code = Int(head.dropFirst(9).prefix(3)) else { throw BenchmarkError("no HTTP answer") }
        return code
    }
}
