import Foundation
import Testing

/// A short option's value may be attached, as getopt allows (`-oFILE`, like `--output=FILE`);
/// short flags are still not clustered.
@Suite("Short options")
struct ShortOptionTests {
    @Test func anAttachedValueIsTheOptionsValue() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", eventLine("a", "5") + eventLine("b", "1"))
            let attached = try RankingsBinary.run(["aggregate", "-q", "--computed-at", "2026-02-18T05:00:00Z",
                                                   "-o" + dir.path("attached.json"), input])
            #expect(attached.status == 0, "stderr: \(attached.stderrText)")
            let separate = try RankingsBinary.run(["aggregate", "-q", "--computed-at", "2026-02-18T05:00:00Z",
                                                   "-o", dir.path("separate.json"), input])
            #expect(separate.status == 0)
            #expect(try dir.read("attached.json") == dir.read("separate.json"))
            #expect(attached.stdout.isEmpty)

            let migrated = try RankingsBinary.run(["migrate", "-q", "-o" + dir.path("migrated.ndjson"), input])
            #expect(migrated.status == 0, "stderr: \(migrated.stderrText)")
            #expect(try dir.read("migrated.ndjson") == Array((eventLine("a", "5") + eventLine("b", "1")).utf8))
        }
    }

    @Test func shortFlagsAreNotClustered() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", eventLine("a", "5"))
            for command in ["aggregate", "migrate"] {
                let run = try RankingsBinary.run([command, "-qv", input])
                #expect(run.status == 64)
                #expect(run.stderrLines.first == "rankings: error: unknown option -qv", "\(run.stderrText)")
            }
            let unknown = try RankingsBinary.run(["aggregate", "-x5", input])
            #expect(unknown.status == 64)
            #expect(unknown.stderrLines.first == "rankings: error: unknown option -x", "\(unknown.stderrText)")
        }
    }
}
