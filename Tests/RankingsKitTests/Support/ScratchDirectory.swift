import Foundation

/// A private directory for one test (unit or end to end), so tests can run in parallel and can assert the
/// exact set of files a run leaves behind.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("rankings-e2e-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Runs `body` with a fresh directory and removes it afterwards, whatever happens.
    static func with<T>(_ body: (ScratchDirectory) throws -> T) throws -> T {
        let scratch = try ScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch.url) }
        return try body(scratch)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        try Data(bytes).write(to: target)
        return target.path
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    func read(_ name: String) throws -> [UInt8] { try Array(Data(contentsOf: url.appendingPathComponent(name))) }

    /// Names directly inside `subdirectory` (or the root), sorted, hidden ones included — temporary
    /// files are exactly what these tests look for.
    func listing(_ subdirectory: String = "") throws -> [String] {
        let dir = subdirectory.isEmpty ? url : url.appendingPathComponent(subdirectory)
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    /// `bytes` compressed by the system `gzip` (one member).
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        _ = ignoringBrokenPipes
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        process.arguments = ["-c", "-n", "-6"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Feed stdin from another thread so a full stdout pipe cannot deadlock us.
        let writer = Thread {
            input.fileHandleForWriting.write(Data(bytes))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw GzipFailed() }
        return Array(compressed)
    }

    struct GzipFailed: Error {}
}

extension RankingsBinary.Result {
    var stderrLines: [String] {
        stderrText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

/// The fixed timestamp every golden document here is made with.
let fixedComputedAt = "2026-02-18T05:00:00Z"

/// One valid event line, for tests that only need *some* good input.
func eventLine(_ id: String, _ rating: String) -> String { "{\"joke_id\": \"\(id)\", \"rating\": \(rating)}\n" }

/// Points at the first line where two documents differ, which reads far better in a failure than
/// two multi-kilobyte byte arrays.
func firstDifference(_ expected: [UInt8], _ actual: [UInt8]) -> String? {
    if expected == actual { return nil }
    let e = String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    let a = String(decoding: actual, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    for i in 0..<max(e.count, a.count) {
        let el = i < e.count ? String(e[i]) : "<none>", al = i < a.count ? String(a[i]) : "<none>"
        if el != al { return "line \(i + 1): expected \(el.debugDescription), got \(al.debugDescription)" }
    }
    return "documents differ in bytes that do not survive decoding (expected \(expected.count) bytes, got \(actual.count))"
}
