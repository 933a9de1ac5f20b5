import Foundation
import Glibc
import Testing
@testable import RankingsKit

/// `AtomicFile`: the target is either untouched or wholly replaced, and no temporary file is
/// left behind.
@Suite("Atomic output file")
struct AtomicFileTests {
    static func mode(_ path: String) -> mode_t {
        var st = stat()
        #expect(stat(path, &st) == 0, "stat \(path)")
        return st.st_mode & 0o7777
    }

    /// The error creating an `AtomicFile` at `path` throws, or nil when it succeeds.
    static func creationError(_ path: String) -> OutputError? {
        do throws(OutputError) {
            let file = try AtomicFile(path: path)
            file.discard()
            return nil
        } catch {
            return error
        }
    }

    @Test func commitReplacesTheBytes() throws {
        try ScratchDirectory.with { dir throws in
            let target = try dir.write("all_time.json", Array("old contents\n".utf8))
            let file = try AtomicFile(path: target)
            let new = Array("{\"new\": true}\n".utf8) + (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
            try file.write(Array(new[..<10]))
            try file.write(Array(new[10...]))
            try file.commit()
            #expect(try dir.read("all_time.json") == new)
            #expect(try dir.listing() == ["all_time.json"])
        }
    }

    @Test func commitCreatesAMissingTarget() throws {
        try ScratchDirectory.with { dir throws in
            let target = dir.path("new.json")
            let file = try AtomicFile(path: target)
            try file.write(Array("x".utf8))
            try file.commit()
            #expect(try dir.read("new.json") == Array("x".utf8))
            #expect(try dir.listing() == ["new.json"])
            let mask = umask(0)
            umask(mask)
            #expect(Self.mode(target) == 0o666 & ~mask)
        }
    }

    @Test func emptyCommitMakesAnEmptyFile() throws {
        try ScratchDirectory.with { dir throws in
            let target = try dir.write("t.json", Array("old".utf8))
            let file = try AtomicFile(path: target)
            try file.commit()
            #expect(try dir.read("t.json") == [])
        }
    }

    @Test func targetIsUntouchedUntilCommit() throws {
        try ScratchDirectory.with { dir throws in
            let target = try dir.write("t.json", Array("old".utf8))
            let file = try AtomicFile(path: target)
            try file.write(Array("new".utf8))
            #expect(try dir.read("t.json") == Array("old".utf8))
            // The new contents have no name until the commit: nothing to leave behind.
            #expect(try dir.listing() == ["t.json"])
            try file.commit()
            #expect(try dir.read("t.json") == Array("new".utf8))
            #expect(try dir.listing() == ["t.json"])
        }
    }

    @Test func discardLeavesTargetAndDirectoryAsTheyWere() throws {
        try ScratchDirectory.with { dir throws in
            let target = try dir.write("t.json", Array("old".utf8))
            try dir.write("neighbour.txt", Array("n".utf8))
            let before = try dir.listing()
            let file = try AtomicFile(path: target)
            try file.write(Array(repeating: 0x41, count: 70_000))
            file.discard()
            #expect(try dir.listing() == before)
            #expect(try dir.read("t.json") == Array("old".utf8))
            // Discarding twice, or committing after a discard, changes nothing.
            file.discard()
            try file.commit()
            #expect(try dir.listing() == before)
            #expect(try dir.read("t.json") == Array("old".utf8))
        }
    }

    @Test func discardWithoutTargetLeavesNothing() throws {
        try ScratchDirectory.with { dir throws in
            let file = try AtomicFile(path: dir.path("t.json"))
            try file.write(Array("new".utf8))
            file.discard()
            #expect(try dir.listing() == [])
        }
    }

    /// Dropping an uncommitted file is a discard.
    @Test func releaseWithoutCommitDiscards() throws {
        try ScratchDirectory.with { dir throws in
            let target = try dir.write("t.json", Array("old".utf8))
            do {
                let file = try AtomicFile(path: target)
                try file.write(Array("new".utf8))
            }
            #expect(try dir.listing() == ["t.json"])
            #expect(try dir.read("t.json") == Array("old".utf8))
        }
    }

    @Test func directoryTargetCannotBeCreated() throws {
        try ScratchDirectory.with { dir throws in
            try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: false)
            let before = try dir.listing()
            #expect(throws: OutputError.cannotCreate(path: dir.path("out"), reason: "a directory, not a regular file")) {
                _ = try AtomicFile(path: dir.path("out"))
            }
            #expect(try dir.listing() == before)
            // With a trailing slash too.
            let withSlash = Self.creationError(dir.path("out") + "/")
            guard case .cannotCreate? = withSlash else { Issue.record("\(String(describing: withSlash))"); return }
            #expect(try dir.listing() == before)
        }
    }

    @Test func missingDirectoryCannotBeCreated() throws {
        try ScratchDirectory.with { dir throws in
            let path = dir.path("no/such/dir/t.json")
            let error = Self.creationError(path)
            #expect(error == .cannotCreate(path: path, reason: String(cString: strerror(ENOENT))))
            #expect(try dir.listing() == [])
        }
    }

    /// A path through a regular file (`file/t.json`) is not a directory either.
    @Test func pathThroughAFileCannotBeCreated() throws {
        try ScratchDirectory.with { dir throws in
            try dir.write("plain", Array("p".utf8))
            let error = Self.creationError(dir.path("plain/t.json"))
            #expect(error == .cannotCreate(path: dir.path("plain/t.json"), reason: String(cString: strerror(ENOTDIR))))
            #expect(try dir.listing() == ["plain"])
        }
    }

    /// A name that is legal must work, however close to NAME_MAX (255 bytes): the temporary
    /// name does not grow with it.
    @Test(arguments: [243, 250, 255])
    func nameUpToNameMaxCommits(_ length: Int) throws {
        try ScratchDirectory.with { dir throws in
            let name = String(repeating: "n", count: length - 5) + ".json"
            let file = try AtomicFile(path: dir.path(name))
            try file.write(Array("x".utf8))
            try file.commit()
            #expect(try dir.read(name) == Array("x".utf8))
            #expect(try dir.listing() == [name])
        }
    }

    /// Outputs committed together: when the last cannot be put in place (its target became a
    /// directory during the run), the ones already in place get their old bytes back.
    @Test func aFailedCommitPutsEveryEarlierTargetBack() throws {
        try ScratchDirectory.with { dir throws in
            let a = try dir.write("a.json", Array("old a".utf8))
            let b = dir.path("b.json")
            let c = dir.path("c.json")
            let files = try [a, b, c].map { path throws(OutputError) in try AtomicFile(path: path) }
            for file in files { try file.write(Array("new".utf8)) }
            mkdir(c, 0o755)
            #expect(throws: OutputError.self) { try AtomicFile.commit(files) }
            #expect(try dir.read("a.json") == Array("old a".utf8))
            #expect(try dir.listing() == ["a.json", "c.json"])
        }
    }

    /// The file lands in the directory it was opened in, renamed or not, and nothing is left
    /// under either name.
    @Test func aRenamedDirectoryKeepsItsOutput() throws {
        try ScratchDirectory.with { dir throws in
            mkdir(dir.path("out"), 0o755)
            let file = try AtomicFile(path: dir.path("out/t.json"))
            try file.write(Array("new".utf8))
            #expect(rename(dir.path("out"), dir.path("moved")) == 0)
            try file.commit()
            #expect(try dir.listing() == ["moved"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("moved")) == ["t.json"])
        }
    }

    @Test("existing permission bits survive a replace", arguments: [0o600, 0o640, 0o644, 0o664, 0o755, 0o444] as [mode_t])
    func permissionsPreserved(_ mode: mode_t) throws {
        try ScratchDirectory.with { dir throws in
            let target = try dir.write("t.json", Array("old".utf8))
            #expect(chmod(target, mode) == 0)
            let file = try AtomicFile(path: target)
            try file.write(Array("new".utf8))
            try file.commit()
            #expect(Self.mode(target) == mode)
            #expect(try dir.read("t.json") == Array("new".utf8))
        }
    }
}
