import Foundation

/// Locates and runs the built `rankings` executable for end-to-end tests.
///
/// The test bundle sits in the same products directory as the executable (`.build/debug/`),
/// whatever `--scratch-path` was used; `RANKINGS_BIN` overrides that for odd layouts.
enum RankingsBinary {
    static let url: URL = {
        if let path = ProcessInfo.processInfo.environment["RANKINGS_BIN"] {
            return URL(fileURLWithPath: path)
        }
        let candidates = [
            Bundle.main.bundleURL,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        for dir in candidates {
            var d = dir
            for _ in 0..<3 {
                let candidate = d.appendingPathComponent("rankings")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                d = d.deletingLastPathComponent()
            }
        }
        fatalError("cannot find the built rankings executable; set RANKINGS_BIN")
    }()

    /// Root of the package checkout (for sample-data and scripts).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: Data
        var stderrText: String { String(decoding: stderr, as: UTF8.self) }
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `rankings` with `arguments`, feeding `stdin` (nothing when nil), in `directory`.
    /// `executable` runs another program instead (a shell that sets limits, then runs `rankings`).
    static func run(_ arguments: [String], stdin: Data? = nil, directory: URL? = nil,
                    environment: [String: String]? = nil, executable: String? = nil) throws -> Result {
        _ = ignoringBrokenPipes
        let process = Process()
        process.executableURL = executable.map { URL(fileURLWithPath: $0) } ?? url
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var out = Data(), err = Data()
        group.enter()
        DispatchQueue.global().async { out = outPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { err = errPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        if let stdin { try? inPipe.fileHandleForWriting.write(contentsOf: stdin) }
        try? inPipe.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus, stdout: out, stderr: err)
    }
}
