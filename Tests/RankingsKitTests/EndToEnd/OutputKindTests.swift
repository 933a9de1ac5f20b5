import Foundation
import Glibc
import Testing

/// What stands at a path the job writes (`--output`, `--stats`, `--report`, `--metrics`): a
/// regular file, or a link to one, is replaced; anything else (a FIFO, a socket, a device, a
/// directory, a link to one) is refused at once with 73, before any input is read, and nothing
/// is written. 0.4 opened such a target to write into it, which waits for ever on a FIFO with
/// no reader: every run here goes through `timeout`, so a run that blocks fails with 124
/// instead of holding the suite.
@Suite("Outputs that are not regular files")
struct OutputKindTests {
    static let options = ["-o", "--stats", "--report", "--metrics"]

    enum Kind: String, CaseIterable, Sendable {
        case fifo, socket, device, directory, linkToFIFO

        /// What the message calls it.
        var words: String {
            switch self {
            case .fifo: "a FIFO"
            case .socket: "a socket"
            case .device: "a device"
            case .directory: "a directory"
            case .linkToFIFO: "a link to a FIFO"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var option: String
        var kind: Kind
        var testDescription: String { "\(option) at \(kind.rawValue)" }
    }

    static let cases = options.flatMap { option in Kind.allCases.map { Case(option: option, kind: $0) } }

    /// Runs `rankings` under a time limit far above any of these runs' (a hang shows as 124).
    static func run(_ arguments: [String], in dir: ScratchDirectory) throws -> RankingsBinary.Result {
        try RankingsBinary.run(["-s", "KILL", "120", RankingsBinary.url.path] + arguments, directory: dir.url,
                               executable: "/usr/bin/timeout")
    }

    /// Makes `kind` at `path`; the device is /dev/null, named through a link's target path.
    static func make(_ kind: Kind, at path: String) throws -> String {
        switch kind {
        case .fifo:
            #expect(mkfifo(path, 0o600) == 0)
        case .socket:
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            #expect(fd >= 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(bound == 0)
            close(fd)
        case .device:
            return "/dev/null"
        case .directory:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case .linkToFIFO:
            #expect(mkfifo(path + ".fifo", 0o600) == 0)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".fifo")
        }
        return path
    }

    /// What a directory holds, each name with its kind, to see that nothing changed.
    static func state(_ dir: ScratchDirectory) throws -> [String] {
        try dir.listing().map { name in
            var st = stat()
            _ = lstat(dir.path(name), &st)
            return "\(name) \(st.st_mode & S_IFMT) \(st.st_size)"
        }
    }

    /// Each kind at each option: 73, the one message, and every path as it was. The other
    /// outputs already hold files, which keep their bytes; the input is missing, so a run that
    /// read its inputs first would say 66. `--metrics`, when it is not the one refused, records
    /// the 73, as it records every status but 64.
    @Test(arguments: cases)
    func refusedAtOnce(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            var paths = ["-o": "out.json", "--stats": "stats.ndjson", "--report": "report.json", "--metrics": "rankings.prom"]
            for (option, name) in paths where option != c.option { try dir.write(name, "before \(name)\n") }
            let target = try Self.make(c.kind, at: dir.path("target"))
            paths[c.option] = target
            let before = try Self.state(dir).filter { !$0.hasPrefix("rankings.prom ") }
            let result = try Self.run(["aggregate", "-q"] + Self.options.flatMap { [$0, paths[$0]!] } + ["missing.ndjson"], in: dir)
            #expect(result.status == 73, "\(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: cannot create \(target): \(c.kind.words), not a regular file"])
            #expect(result.stdout.isEmpty)
            #expect(try Self.state(dir).filter { !$0.hasPrefix("rankings.prom ") } == before)
            for (option, name) in paths where option != c.option && option != "--metrics" {
                #expect(try dir.read(name) == Array("before \(name)\n".utf8))
            }
            if c.option != "--metrics" {
                let metrics = String(decoding: try dir.read("rankings.prom"), as: UTF8.self)
                #expect(metrics.contains("\nrankings_last_run_exit_status 73\n"), "\(metrics)")
            }
        }
    }

    /// The guard reads the old document before replacing it: a FIFO there, which 0.4 waited on
    /// for ever, is refused as well, and so is one at `--metrics`, whose last success is read.
    @Test(arguments: ["-o", "--metrics"])
    func aFIFOThatWouldBeReadIsRefused(_ option: String) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in.ndjson", eventLine("a", "5"))
            #expect(mkfifo(dir.path("target"), 0o600) == 0)
            var words = ["aggregate", "-q", "--max-drop", "1", option, "target"]
            if option != "-o" { words += ["-o", "out.json"] }
            let result = try Self.run(words + [input], in: dir)
            #expect(result.status == 73, "\(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: cannot create target: a FIFO, not a regular file"])
            #expect(try dir.listing() == ["in.ndjson", "target"])
        }
    }

    /// A FIFO named as an input is opened when the inputs are checked, which waits for a writer:
    /// the refusal comes first, so the run never opens it.
    @Test func theRefusalComesBeforeAnyInputIsOpened() throws {
        try ScratchDirectory.with { dir in
            #expect(mkfifo(dir.path("input.ndjson"), 0o600) == 0)
            #expect(mkfifo(dir.path("out.json"), 0o600) == 0)
            let result = try Self.run(["aggregate", "-q", "-o", "out.json", "input.ndjson"], in: dir)
            #expect(result.status == 73, "\(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: cannot create out.json: a FIFO, not a regular file"])
        }
    }

    /// A link to a regular file keeps working at every option, as in 0.4: the file it names is
    /// replaced, the link stays a link; the guard reads the old document through it.
    @Test(arguments: options)
    func aLinkToARegularFileIsFollowed(_ option: String) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in.ndjson", eventLine("a", "5"))
            try dir.write("real", "old\n")
            try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: "real")
            var words = ["aggregate", "-q", "--computed-at", fixedComputedAt, option, "link"]
            if option != "-o" { words += ["-o", "out.json"] }
            let result = try Self.run(words + [input], in: dir)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.path("link")) == "real")
            let written = try dir.read("real")
            #expect(written != Array("old\n".utf8) && !written.isEmpty)
            if option == "-o" {
                #expect(written == Backfill.document(hilarious: [("a", 1)], horrible: []))
            }
        }
    }

    @Test func theGuardReadsTheOldDocumentThroughALink() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in.ndjson", eventLine("a", "5"))
            let old = Backfill.document(hilarious: [("a", 10)], horrible: [])
            try dir.write("real.json", old)
            try FileManager.default.createSymbolicLink(atPath: dir.path("link.json"), withDestinationPath: "real.json")
            let result = try Self.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--max-drop", "50", "-o", "link.json", input],
                                      in: dir)
            #expect(result.status == 65, "\(result.stderrText)")
            #expect(result.stderrText.contains("90.00% fewer than the 10 in link.json"), "\(result.stderrText)")
            #expect(try dir.read("real.json") == old)
        }
    }
}
