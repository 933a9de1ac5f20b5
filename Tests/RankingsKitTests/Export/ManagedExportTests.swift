import Foundation
import Testing
@testable import RankingsKit

/// The emulator-made fixture (Tests/firestore-export/make-fixtures.sh) read event for event
/// against what Google's client saw in the collection.
@Suite("Managed export: emulator fixtures")
struct ManagedExportTests {
    @Test("the export root gives the client's events, bad records and left-out entities")
    func root() throws {
        let export = try #require(try ManagedExport.open(ExportFixtures.exportRoot(ExportFixtures.emulator).path))
        #expect(export.outputFiles.map { ($0.displayPath as NSString).lastPathComponent } == ["output-0"])
        try check(export)
    }

    @Test("a kind folder on its own reads the same")
    func kindFolder() throws {
        let folder = try ExportFixtures.exportRoot(ExportFixtures.emulator).appendingPathComponent("all_namespaces/all_kinds")
        let export = try #require(try ManagedExport.open(folder.path))
        #expect(export.outputFiles.map(\.displayPath) == [folder.path + "/output-0"])
        try check(export)
    }

    @Test("a directory without export metadata is not an export")
    func notAnExport() throws {
        #expect(try ManagedExport.open(ExportFixtures.root.path) == nil)
    }

    @Test("every cut of the file into block ranges delivers each record once, in order")
    func ranges() throws {
        let export = try #require(try ManagedExport.open(ExportFixtures.exportRoot(ExportFixtures.emulator).path))
        let file = export.outputFiles[0]
        #expect(file.blockCount == 4)
        let whole = try CollectedExport.read(export)[0]
        // Offsets grow through the file: they order events across ranges.
        #expect(whole.offsets.first == 0 || whole.leftOut.first == 1)
        #expect(zip(whole.offsets, whole.offsets.dropFirst()).allSatisfy { $0 < $1 })
        var reader = ExportFileReader()
        // Every set of cut points between the blocks.
        for mask in 0..<(1 << (file.blockCount - 1)) {
            var cuts: [Int64] = [0]
            for b in 1..<file.blockCount where mask & (1 << (b - 1)) != 0 { cuts.append(b) }
            cuts.append(file.blockCount)
            var joined = CollectedExport()
            var before = 0
            for (lower, upper) in zip(cuts, cuts.dropFirst()) {
                var part = CollectedExport()
                let count = try reader.read(file, blocks: lower..<upper, into: &part)
                joined.events += part.events.map { var e = $0; e.record += before; return e }
                joined.offsets += part.offsets
                joined.leftOut += part.leftOut.map { $0 + before }
                joined.bad += part.bad.map { ($0.record + before, $0.reason) }
                before += count
            }
            #expect(joined == whole, "cuts \(cuts)")
            #expect(joined.offsets == whole.offsets, "cuts \(cuts)")
            #expect(before == whole.events.count + whole.leftOut.count + whole.bad.count)
        }
    }

    private func check(_ export: ManagedExport) throws {
        let expected = try ExportFixtures.expected(ExportFixtures.emulator)
        let read = try CollectedExport.read(export)
        let events = read.flatMap(\.events)
        #expect(events.map(\.unplaced).sorted() == expected.events)
        #expect(read.flatMap(\.bad).map(\.reason).sorted() == expected.badReasons)
        #expect(read.flatMap(\.leftOut).count == expected.leftOut)
        // Records are numbered from 1 in file order, each once.
        let numbers = (events.map(\.record) + read.flatMap(\.leftOut) + read.flatMap(\.bad).map(\.record)).sorted()
        #expect(numbers == Array(1...numbers.count))
    }
}
