import Foundation

/// How SnippetBox runs, read from the environment with defaults that work on a fresh machine.
///
/// | variable | default | meaning |
/// | --- | --- | --- |
/// | `HOST` | `127.0.0.1` | the address to listen on (`0.0.0.0` to reach it from other machines) |
/// | `PORT` | `8080` | the port |
/// | `DATA_DIR` | `./data` | where the stores and their image files live |
/// | `BASE_PATH` | empty | a path prefix when served behind a reverse proxy, e.g. `/snippets` |
/// | `MAX_UPLOAD_MB` | `10` | the largest image upload accepted |
/// | `ADMIN_PASSWORD` | none | creates the account `admin` with this password at the first start |
/// | `SECURE_COOKIES` | `false` | `true` when served over HTTPS: the session cookie is then `Secure` |
/// | `TRUST_X_FORWARDED_FOR` | `false` | `true` behind a reverse proxy that sets `X-Forwarded-For`: login limits count the client's address from it |
/// | `BACKUP_EVERY_HOURS` | `0` (off) | writes a backup archive to `DATA_DIR/backups` this often |
/// | `BACKUP_KEEP` | `7` | how many scheduled backups to keep |
public struct AppSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var dataDirectory: URL
    /// Empty, or a path starting with "/" and not ending with one.
    public var basePath: String
    public var maxUploadBytes: Int
    public var adminPassword: String?
    public var secureCookies: Bool
    /// Whether the last address in `X-Forwarded-For` (the one the nearest proxy added) is the
    /// client's. Off by default: without a proxy that sets it, any client could write it.
    public var trustForwardedFor = false
    public var backupEveryHours: Int
    public var backupsKept: Int
    /// bcrypt's cost: 12 in use; tests lower it to stay fast.
    public var passwordHashCost: Int
    /// How many sessions the server keeps in memory at most (see `ExpiringMemorySessions`).
    public var sessionLimit = 10_000

    public init(host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL = URL(fileURLWithPath: "data"),
                basePath: String = "", maxUploadMegabytes: Int = 10, adminPassword: String? = nil,
                secureCookies: Bool = false, backupEveryHours: Int = 0, backupsKept: Int = 7, passwordHashCost: Int = 12) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.basePath = Self.normalizedBasePath(basePath)
        self.maxUploadBytes = maxUploadMegabytes * 1024 * 1024
        self.adminPassword = adminPassword
        self.secureCookies = secureCookies
        self.backupEveryHours = backupEveryHours
        self.backupsKept = backupsKept
        self.passwordHashCost = passwordHashCost
    }

    /// Reads the settings; a value that makes no sense is an error that names the variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AppSettings {
        var settings = AppSettings()
        if let host = environment["HOST"], !host.isEmpty { settings.host = host }
        if let port = environment["PORT"], !port.isEmpty {
            settings.port = try number(port, named: "PORT", in: 1...65_535, expected: "a port number from 1 to 65535")
        }
        if let directory = environment["DATA_DIR"], !directory.isEmpty {
            settings.dataDirectory = URL(fileURLWithPath: directory)
        }
        if let basePath = environment["BASE_PATH"] {
            // ASCII, and no segment of dots: "/café" was served at neither its encoded nor its raw
            // path, and "/." is a path every client shortens to "/".
            let segments = basePath.split(separator: "/")
            guard basePath.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/-_.".contains($0)) }),
                  !segments.contains(where: { $0.allSatisfy { $0 == "." } }) else {
                throw SettingsError(variable: "BASE_PATH", value: basePath, expected: "a URL path such as /snippets")
            }
            settings.basePath = normalizedBasePath(basePath)
        }
        if let megabytes = environment["MAX_UPLOAD_MB"], !megabytes.isEmpty {
            let value = try number(megabytes, named: "MAX_UPLOAD_MB", in: 1...1024, expected: "a number of megabytes from 1 to 1024")
            settings.maxUploadBytes = value * 1024 * 1024
        }
        if let password = environment["ADMIN_PASSWORD"], !password.isEmpty {
            if let problem = AccountStore.problem(username: nil, password: password, confirmation: nil) {
                throw SettingsError(variable: "ADMIN_PASSWORD", value: "(hidden)", expected: problem.message)
            }
            settings.adminPassword = password
        }
        if let secure = try flag(environment, named: "SECURE_COOKIES") { settings.secureCookies = secure }
        if let trust = try flag(environment, named: "TRUST_X_FORWARDED_FOR") { settings.trustForwardedFor = trust }
        if let hours = environment["BACKUP_EVERY_HOURS"], !hours.isEmpty {
            settings.backupEveryHours = try number(hours, named: "BACKUP_EVERY_HOURS", in: 0...8_760, expected: "a number of hours, 0 for none")
        }
        if let kept = environment["BACKUP_KEEP"], !kept.isEmpty {
            settings.backupsKept = try number(kept, named: "BACKUP_KEEP", in: 1...1_000, expected: "a number from 1 to 1000")
        }
        return settings
    }

    /// A true-or-false variable's value, nil if it is not set.
    private static func flag(_ environment: [String: String], named variable: String) throws -> Bool? {
        guard let text = environment[variable], !text.isEmpty else { return nil }
        guard ["true", "false", "1", "0"].contains(text) else {
            throw SettingsError(variable: variable, value: text, expected: "true or false")
        }
        return text == "true" || text == "1"
    }

    private static func number(_ text: String, named variable: String, in range: ClosedRange<Int>, expected: String) throws -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw SettingsError(variable: variable, value: text, expected: expected)
        }
        return value
    }

    /// The first account's library, which is also where a store made before accounts existed lives.
    static let firstLibraryFileName = "snippetbox.store"

    /// The first library's store file, in the data directory (`snippetbox seed` fills it).
    public var storeURL: URL { dataDirectory.appendingPathComponent(Self.firstLibraryFileName) }

    /// Where scheduled backups and the admin's backup button write archives.
    public var backupDirectory: URL { dataDirectory.appendingPathComponent("backups", isDirectory: true) }

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
