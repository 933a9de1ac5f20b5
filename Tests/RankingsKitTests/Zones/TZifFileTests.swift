import Foundation
import Testing
@testable import RankingsKit

/// Reading compiled zone files: every version, hand-made files with known answers, malformed
/// ones, the system's database, and zone names that try to leave it.
@Suite("TZif files and zone names")
struct TZifFileTests {
    /// A TZif file as `zic` lays it out: a 32-bit block, then for version 2 and later a 64-bit
    /// block and the footer.
    static func tzif(version: UInt8, transitions: [(at: Int64, type: UInt8)], offsets: [Int32],
                     footer: String? = nil, leapSeconds: Int = 0) -> [UInt8] {
        func be(_ v: Int64, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func block(_ timeSize: Int) -> [UInt8] {
            let chars = Array("LMT\0".utf8)
            var b = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
            for count in [offsets.count, offsets.count, leapSeconds, transitions.count, offsets.count, chars.count] {
                b += be(Int64(count), 4)
            }
            for t in transitions { b += be(t.at, timeSize) }
            b += transitions.map(\.type)
            for o in offsets { b += be(Int64(o), 4) + [0, 0] }
            b += chars
            for k in 0..<leapSeconds { b += be(Int64(78_796_800 + k), timeSize) + be(Int64(k + 1), 4) }
            b += [UInt8](repeating: 0, count: 2 * offsets.count)
            return b
        }
        if version == 0 { return block(4) }
        return block(4) + block(8) + Array("\n\(footer ?? "")\n".utf8)
    }

    static let newYorkFooter = "EST5EDT,M3.2.0,M11.1.0"
    static func utc(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)!.seconds }

    @Test(arguments: [UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4")])
    func slimFileUsesTheFooterAfterItsLastTransition(_ version: UInt8) throws {
        // As slim tzdata writes New York: transitions up to 2007's rule change, then the rule.
        let bytes = Self.tzif(version: version, transitions: [(Self.utc("2007-03-11T07:00:00Z"), 1),
                                                              (Self.utc("2007-11-04T06:00:00Z"), 0)],
                              offsets: [-18_000, -14_400], footer: Self.newYorkFooter)
        let file = try #require(TZifFile(bytes))
        #expect(file.footer == PosixTZRule(Self.newYorkFooter))
        #expect(file.secondsFromUTC(at: Self.utc("2000-01-01T00:00:00Z")) == -18_000)
        #expect(file.secondsFromUTC(at: Self.utc("2007-07-01T00:00:00Z")) == -14_400)
        #expect(file.secondsFromUTC(at: Self.utc("2026-03-08T06:59:59Z")) == -18_000)
        #expect(file.secondsFromUTC(at: Self.utc("2026-03-08T07:00:00Z")) == -14_400)
        #expect(file.secondsFromUTC(at: Self.utc("2099-07-01T00:00:00Z")) == -14_400)
    }

    @Test func versionOneHasNoFooterAndKeepsTheLastOffset() throws {
        let bytes = Self.tzif(version: 0, transitions: [(-1_000_000, 1), (1_000_000, 2)], offsets: [100, 3600, 7200])
        let file = try #require(TZifFile(bytes))
        #expect(file.footer == nil)
        #expect(file.secondsFromUTC(at: -1_000_001) == 100)
        #expect(file.secondsFromUTC(at: -1_000_000) == 3600)
        #expect(file.secondsFromUTC(at: 999_999) == 3600)
        #expect(file.secondsFromUTC(at: 1_000_000) == 7200)
        #expect(file.secondsFromUTC(at: 4_000_000_000) == 7200)
    }

    @Test func version2ReadsTheSixtyFourBitBlock() throws {
        // Before 1901 only the 64-bit block can say it; a 32-bit reader would see nothing.
        var bytes = Self.tzif(version: UInt8(ascii: "2"), transitions: [(-3_000_000_000, 1)], offsets: [-17_762, -18_000],
                              footer: "EST5")
        #expect(TZifFile(bytes)?.secondsFromUTC(at: -3_000_000_001) == -17_762)
        #expect(TZifFile(bytes)?.secondsFromUTC(at: -2_000_000_000) == -18_000)
        // An empty footer says nothing: the last transition's offset holds.
        bytes = Self.tzif(version: UInt8(ascii: "2"), transitions: [(0, 1)], offsets: [0, 3600], footer: "")
        #expect(TZifFile(bytes)?.secondsFromUTC(at: 5_000_000_000) == 3600)
        // No transitions at all: the footer, as in a slim UTC file.
        bytes = Self.tzif(version: UInt8(ascii: "2"), transitions: [], offsets: [0], footer: "<+0530>-5:30")
        #expect(TZifFile(bytes)?.secondsFromUTC(at: 0) == 19_800)
    }

    @Test func malformedFilesAreRefused() {
        let good = Self.tzif(version: UInt8(ascii: "2"), transitions: [(0, 1)], offsets: [0, 3600], footer: "CET-1")
        #expect(TZifFile(good) != nil)
        var badMagic = good
        badMagic[0] = UInt8(ascii: "X")
        var badVersion = good
        badVersion[4] = UInt8(ascii: "9")
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("bad magic", badMagic),
            ("unknown version", badVersion),
            ("truncated data", Array(good.prefix(60))),
            ("truncated footer", Array(good.dropLast())),
            ("bad footer", Self.tzif(version: UInt8(ascii: "2"), transitions: [], offsets: [0], footer: "CET-1CEST")),
            ("leap seconds", Self.tzif(version: UInt8(ascii: "2"), transitions: [], offsets: [0], footer: "UTC0", leapSeconds: 2)),
            ("type index out of range", Self.tzif(version: UInt8(ascii: "2"), transitions: [(0, 2)], offsets: [0, 3600],
                                                  footer: "UTC0")),
            ("transitions out of order", Self.tzif(version: UInt8(ascii: "2"), transitions: [(10, 1), (5, 0)],
                                                   offsets: [0, 3600], footer: "UTC0")),
            ("no types", Self.tzif(version: UInt8(ascii: "2"), transitions: [], offsets: [], footer: "UTC0")),
            ("absurd offset", Self.tzif(version: UInt8(ascii: "2"), transitions: [], offsets: [100_000], footer: "UTC0")),
        ]
        for (why, bytes) in cases {
            #expect(TZifFile(bytes) == nil, "\(why)")
        }
    }

    @Test func systemDatabaseZones() throws {
        let newYork = try #require(IANAZone(identifier: "America/New_York"))
        #expect(newYork.secondsFromUTC(at: Self.utc("2026-07-01T00:00:00Z")) == -14_400)
        #expect(newYork.secondsFromUTC(at: Self.utc("2026-01-01T00:00:00Z")) == -18_000)
        #expect(IANAZone(identifier: "Etc/GMT+5")?.secondsFromUTC(at: 0) == -18_000)
        #expect(IANAZone(identifier: "Asia/Kolkata")?.secondsFromUTC(at: Self.utc("2026-01-01T00:00:00Z")) == 19_800)
        // Built in, so they work without a database, like Foundation's.
        #expect(IANAZone(identifier: "UTC", directory: "/nonexistent")?.secondsFromUTC(at: 0) == 0)
        #expect(IANAZone(identifier: "GMT", directory: "/nonexistent")?.secondsFromUTC(at: 0) == 0)
        #expect(IANAZone(identifier: "America/New_York", directory: "/nonexistent") == nil)
    }

    @Test(arguments: ["", "/", "/etc/passwd", "/usr/share/zoneinfo/UTC", "../zoneinfo/UTC", "America/../UTC",
                      "America/./New_York", "./UTC", "America//New_York", "America/New_York/", "America", "Not/AZone",
                      "america/new_york", "right/UTC", "posix/America/New_York", "EST+5", "America/New York",
                      "tzdata.zi", "zone.tab", "localtime", "posixrules"])
    func namesThatAreNotZones(_ name: String) {
        #expect(IANAZone(identifier: name) == nil)
    }

    /// A zone of one's own, in a directory named by TZDIR, reaches the binary's week bounds.
    @Test func tzdirNamesTheDatabase() throws {
        try ScratchDirectory.with { scratch in
            let zone = Self.tzif(version: UInt8(ascii: "2"), transitions: [], offsets: [3600], footer: "<+01>-1")
            try scratch.write("zones/Test/Plus_One", zone)
            let input = try scratch.write("a.ndjson", Backfill.event("a", "5", week: "2026-W07"))
            var environment = ProcessInfo.processInfo.environment
            environment["TZDIR"] = scratch.path("zones")
            let run = try RankingsBinary.run(["aggregate", "--week", "2026-W07", "--time-zone", "Test/Plus_One",
                                              "--computed-at", "2026-02-16T00:00:00Z", "-q", input],
                                             environment: environment)
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(run.stdoutText.contains("\"week_start\": \"2026-02-08T23:00:00.000Z\""), "\(run.stdoutText)")
            // The default zone is looked up there too, and is missing: no option was wrong, so not
            // a usage error blaming --time-zone, but an input the run lacks (66), which --metrics records.
            let missing = try RankingsBinary.run(["aggregate", "--week", "2026-W07", "-q", "--metrics", scratch.path("m.prom"), input],
                                                 environment: environment)
            #expect(missing.status == 66)
            #expect(!missing.stderrText.contains("--time-zone takes"), "\(missing.stderrText)")
            #expect(missing.stderrText.contains(scratch.path("zones/America/New_York")), "\(missing.stderrText)")
            #expect(try String(decoding: scratch.read("m.prom"), as: UTF8.self).contains("rankings_last_run_exit_status 66"))
            environment["TZDIR"] = scratch.path("nowhere")
            let noDatabase = try RankingsBinary.run(["aggregate", "--week", "2026-W07", "-q", input], environment: environment)
            #expect(noDatabase.status == 66)
            #expect(noDatabase.stderrText.contains(scratch.path("nowhere")), "\(noDatabase.stderrText)")
        }
    }
}
