import Foundation

/// How SnippetBox runs, read from the environment with defaults that work on a fresh machine.
///
/// | variable | default | meaning |
/// | --- | --- | --- |
/// | `HOST` | `127.0.0.1` | the address to listen on (`0.0.0.0` to reach it from other machines) |
/// | `PORT` | `8080` | the port |
/// | `DATA_DIR` | `./data` | where the store and its image files live |
/// | `BASE_PATH` | empty | a path prefix when served behind a reverse proxy, e.g. `/snippets` |
/// | `MAX_UPLOAD_MB` | `10` | the largest image upload accepted |
public struct AppSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var dataDirectory: URL
    /// Empty, or a path starting with "/" and not ending with one.
    public var basePath: String
    public var maxUploadBytes: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL = URL(fileURLWithPath: "data"),
                basePath: String = "", maxUploadMegabytes: Int = 10) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.basePath = Self.normalizedBasePath(basePath)
        self.maxUploadBytes = maxUploadMegabytes * 1024 * 1024
    }

    /// Reads the settings; a value that makes no sense is an error that names the variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AppSettings {
        var settings = AppSettings()
        if let host = environment["HOST"], !host.isEmpty { settings.host = host }
        if let port = environment["PORT"], !port.isEmpty {
            guard let value = Int(port), (1...65_535).contains(value) else {
                throw SettingsError(variable: "PORT", value: port, expected: "a port number from 1 to 65535")
            }
            settings.port = value
        }
        if let directory = environment["DATA_DIR"], !directory.isEmpty {
            settings.dataDirectory = URL(fileURLWithPath: directory)
        }
        if let basePath = environment["BASE_PATH"] {
            guard !basePath.contains("..") && basePath.allSatisfy({ $0.isLetter || $0.isNumber || "/-_.".contains($0) }) else {
                throw SettingsError(variable: "BASE_PATH", value: basePath, expected: "a URL path such as /snippets")
            }
            settings.basePath = normalizedBasePath(basePath)
        }
        if let megabytes = environment["MAX_UPLOAD_MB"], !megabytes.isEmpty {
            guard let value = Int(megabytes), (1...1024).contains(value) else {
                throw SettingsError(variable: "MAX_UPLOAD_MB", value: megabytes, expected: "a number of megabytes from 1 to 1024")
            }
            settings.maxUploadBytes = value * 1024 * 1024
        }
        return settings
    }

    /// The store file, in the data directory.
    public var storeURL: URL { dataDirectory.appendingPathComponent("snippetbox.store") }

    public var maxUploadMegabytes: Int { maxUploadBytes / (1024 * 1024) }

    static func normalizedBasePath(_ path: String) -> String {
        let parts = path.split(separator: "/").filter { !$0.isEmpty }
        return parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }
}

public struct SettingsError: Error, CustomStringConvertible {
    public let variable: String
    public let value: String
    public let expected: String
    public var description: String { "\(variable)=\(value) is not valid: expected \(expected)" }
}
