import Foundation
@testable import RankingsKit

/// A private directory for one unit test, removed afterwards whatever happens.
struct UnitTempDirectory {
    let path: String

    private init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("rankings-unit-\(UUID().uuidString)", isDirectory: true).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    static func with<T>(_ body: (UnitTempDirectory) throws -> T) throws -> T {
        let dir = try UnitTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir.path) }
        return try body(dir)
    }

    func path(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    func read(_ name: String) throws -> [UInt8] { try Array(Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    /// Every name in the directory, hidden ones included, sorted.
    func listing() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

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

/// Runs `Aggregator.run` over `paths` and closes the files afterwards.
func runAggregator(_ paths: [String], threads: Int, pieceSize: Int64? = nil,
               chunkSize: Int = LineReader.chunkSize) throws -> AggregationResult {
    let files = try InputFile.resolve(paths)
    defer { for file in files where file.fd > 2 { close(file.fd) } }
    return try Aggregator.run(files, threads: threads, pieceSize: pieceSize, chunkSize: chunkSize)
}

/// A seeded generator, so generated inputs are the same on every run.
struct UnitRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Builds a `Tally` from (id bytes, rating) events.
func makeTally(_ events: [([UInt8], Double)]) -> Tally {
    let tally = Tally()
    for (id, rating) in events {
        id.withUnsafeBufferPointer { tally.add(id: $0, rating: rating) }
    }
    return tally
}

func makeTally(_ events: [(String, Double)]) -> Tally { makeTally(events.map { (Array($0.0.utf8), $0.1) }) }
