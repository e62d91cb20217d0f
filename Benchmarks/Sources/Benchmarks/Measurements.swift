import Foundation

/// Monotonic seconds.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

@discardableResult
func timed<T>(_ body: () async throws -> T) async rethrows -> (seconds: Double, value: T) {
    let start = now()
    let value = try await body()
    return (now() - start, value)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = p / 100 * Double(sorted.count - 1)
    let low = Int(rank.rounded(.down)), high = Int(rank.rounded(.up))
    return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
}

/// Every figure of a run: per workload and contender, the samples (seconds, or bytes for memory).
final class Results {
    enum Kind: String { case once, perQuery, bytes }
    struct Entry {
        let group: String
        let workload: String
        let contender: String
        let kind: Kind
        var samples: [Double] = []
        var note: String = ""
    }
    private(set) var entries: [Entry] = []
    private var checks: [String: (String, Int)] = [:]
    var warnings: [String] = []

    func add(_ group: String, _ workload: String, _ contender: String, _ kind: Kind, _ samples: [Double], note: String = "") {
        if let index = entries.firstIndex(where: { $0.workload == workload && $0.contender == contender }) {
            entries[index].samples += samples
            if !note.isEmpty { entries[index].note = note }
        } else {
            entries.append(Entry(group: group, workload: workload, contender: contender, kind: kind, samples: samples, note: note))
        }
    }

    /// Checks that every contender computed the same thing (same rows, same tags, same hits).
    func check(_ workload: String, _ contender: String, _ value: Int?) {
        guard let value else { return }
        if let (first, expected) = checks[workload] {
            if expected != value && first != contender {
                let warning = "WARNING: \(workload): \(contender) computed \(value), \(first) computed \(expected)"
                if !warnings.contains(warning) { warnings.append(warning); print(warning) }
            }
        } else {
            checks[workload] = (contender, value)
        }
    }

    /// The headline figure: the median of the rounds, or the median (p50) of all query samples.
    static func median(_ entry: Entry) -> Double { percentile(entry.samples, 50) }

    func baseline(for entry: Entry) -> Entry? {
        entries.first { $0.workload == entry.workload && $0.contender == RawSQLiteContender.name }
    }

    static func format(_ value: Double, _ kind: Kind) -> String {
        if value.isNaN { return "n/a" }
        switch kind {
        case .bytes: return String(format: "%.1f MB", value / 1_048_576)
        case .once, .perQuery:
            if value >= 1 { return String(format: "%.2f s", value) }
            if value >= 0.001 { return String(format: "%.2f ms", value * 1000) }
            return String(format: "%.1f µs", value * 1_000_000)
        }
    }

    /// Entries by workload (in the order they were first measured), contenders in a fixed order.
    var ordered: [Entry] {
        let contenderOrder = [RawSQLiteContender.name, GRDBContender.name, FluentContender.name, ObjectGraphContender.name]
        var workloads: [String] = []
        for entry in entries where !workloads.contains(entry.workload) { workloads.append(entry.workload) }
        return entries.sorted { a, b in
            let wa = workloads.firstIndex(of: a.workload)!, wb = workloads.firstIndex(of: b.workload)!
            if wa != wb { return wa < wb }
            return (contenderOrder.firstIndex(of: a.contender) ?? 99) < (contenderOrder.firstIndex(of: b.contender) ?? 99)
        }
    }

    func printTable() {
        let entries = ordered
        let header = ["workload", "contender", "median / p50", "p99", "× raw SQLite", "samples"]
        var rows: [[String]] = []
        for entry in entries {
            let median = Self.median(entry)
            let p99 = entry.kind == .perQuery ? Self.format(percentile(entry.samples, 99), entry.kind) : ""
            var ratio = ""
            if let base = baseline(for: entry), !median.isNaN {
                ratio = String(format: "%.2f×", median / Self.median(base))
            }
            rows.append([entry.workload, entry.contender, Self.format(median, entry.kind), p99, ratio,
                         "\(entry.samples.count)\(entry.note.isEmpty ? "" : " (\(entry.note))")"])
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max()! }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
        }
        print(line(header))
        print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        var lastGroupName = ""
        for (entry, row) in zip(entries, rows) {
            if entry.group != lastGroupName && !lastGroupName.isEmpty {
                print(line(header.map { _ in "" }))
            }
            lastGroupName = entry.group
            print(line(row))
        }
    }

    func json(metadata: [String: Any]) throws -> Data {
        let list: [[String: Any]] = ordered.map { entry in
            var item: [String: Any] = [
                "group": entry.group, "workload": entry.workload, "contender": entry.contender, "kind": entry.kind.rawValue,
                "unit": entry.kind == .bytes ? "bytes" : "seconds", "count": entry.samples.count,
                "median": Self.median(entry).isNaN ? NSNull() as Any : Self.median(entry) as Any,
            ]
            if entry.kind == .perQuery, !entry.samples.isEmpty {
                item["p50"] = percentile(entry.samples, 50)
                item["p99"] = percentile(entry.samples, 99)
            } else {
                item["samples"] = entry.samples
            }
            if let base = baseline(for: entry), !Self.median(entry).isNaN {
                item["ratioToRawSQLite"] = Self.median(entry) / Self.median(base)
            }
            if !entry.note.isEmpty { item["note"] = entry.note }
            return item
        }
        var object = metadata
        object["results"] = list
        object["warnings"] = warnings
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }
}

/// What this process and the machine spent over a stretch of wall time, for a visit that took far
/// longer than its kind (a first page once took 1.65 s in a full run against 10–16 ms alone): whether
/// the time went to the process's own work, to reading from the disk, or to waiting for a CPU the
/// machine did not give it (a virtual machine's steal) is what tells a cause in our code from one
/// outside it.
struct ResourceUsage {
    /// User and system CPU seconds of this process, every thread.
    var processCPU: Double
    var majorFaults: Int
    /// 512-byte blocks this process read from a device (not from the file cache).
    var blocksRead: Int
    var voluntarySwitches: Int
    var involuntarySwitches: Int
    /// Seconds summed over the machine's CPUs, from /proc/stat (zero where there is none).
    var machineIOWait: Double
    var machineSteal: Double
    /// The machine's file pages written and not yet on the disk (/proc/meminfo's Dirty), in bytes:
    /// a commit's sync waits for the file system's journal, which may wait for them.
    var machineDirtyBytes: Int

    static func current() -> ResourceUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        // "cpu  user nice system idle iowait irq softirq steal …", in clock ticks.
        var ioWait = 0.0, steal = 0.0
        if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
           let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") {
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
            if ticks.count >= 8, perSecond > 0 {
                ioWait = ticks[4] / perSecond
                steal = ticks[7] / perSecond
            }
        }
        var dirty = 0
        if let meminfo = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
           let line = meminfo.split(separator: "\n").first(where: { $0.hasPrefix("Dirty:") }),
           let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) {
            dirty = kilobytes * 1024
        }
        return ResourceUsage(
            processCPU: seconds(usage.ru_utime) + seconds(usage.ru_stime), majorFaults: usage.ru_majflt,
            blocksRead: usage.ru_inblock, voluntarySwitches: usage.ru_nvcsw, involuntarySwitches: usage.ru_nivcsw,
            machineIOWait: ioWait, machineSteal: steal, machineDirtyBytes: dirty)
    }

    /// What was spent between `earlier` and this snapshot, for a note beside a wall time.
    func described(since earlier: ResourceUsage) -> String {
        String(format: "process CPU %.1f ms, %ld major faults, %ld blocks read, %ld waits, %ld preemptions; machine I/O wait %.0f ms, steal %.0f ms, %ld MB dirty at the start",
               (processCPU - earlier.processCPU) * 1e3, majorFaults - earlier.majorFaults, blocksRead - earlier.blocksRead,
               voluntarySwitches - earlier.voluntarySwitches, involuntarySwitches - earlier.involuntarySwitches,
               (machineIOWait - earlier.machineIOWait) * 1e3, (machineSteal - earlier.machineSteal) * 1e3,
               earlier.machineDirtyBytes >> 20)
    }
}
