import Foundation
import Testing
@testable import RankingsKit

/// What a sink was given, in order, with the fields copied out.
struct CollectedExport: ExportSink, Equatable {
    struct Event: Equatable, Comparable {
        var id: String
        var jokeID: String
        var rating: Double
        var timestampMicros: Int64?
        var timestampUnreadable: String?
        var deviceID: String?
        var weekID: String?
        var record: Int

        static func < (a: Event, b: Event) -> Bool { Array(a.id.utf8).lexicographicallyPrecedes(Array(b.id.utf8)) }
    }

    var events: [Event] = []
    /// Each event's record offset, in order (kept apart so events compare across readers).
    var offsets: [Int64] = []
    var leftOut: [Int] = []
    var bad: [(record: Int, reason: String)] = []
    /// What `--report` would name each bad record by, with no selection.
    var refused: [RefusedRecord] = []

    mutating func event(_ event: ExportEvent, record: Int) -> BadRecord? {
        func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        var micros: Int64?
        var unreadable: String?
        switch event.timestamp {
        case .absent: break
        case .unreadable(let value): unreadable = value
        case .at(let t): micros = t.seconds * 1_000_000 + Int64(t.nanoseconds / 1000)
        }
        offsets.append(event.offset)
        events.append(Event(id: text(event.eventID), jokeID: text(event.jokeID), rating: event.rating,
                            timestampMicros: micros, timestampUnreadable: unreadable,
                            deviceID: event.deviceID.map(text), weekID: event.weekID.map(text), record: record))
        return nil
    }

    mutating func leftOut(record: Int) { leftOut.append(record) }
    mutating func bad(record: Int, reason: BadRecord, refused: (KindWindow) -> RefusedRecord) {
        bad.append((record, reason.message))
        self.refused.append(refused(KindWindow()))
    }

    static func == (a: CollectedExport, b: CollectedExport) -> Bool {
        a.events == b.events && a.leftOut == b.leftOut && a.bad.map(\.record) == b.bad.map(\.record)
            && a.bad.map(\.reason) == b.bad.map(\.reason)
    }

    /// Everything, read front to back from every output file.
    static func read(_ export: ManagedExport) throws -> [CollectedExport] {
        var reader = ExportFileReader()
        return try export.outputFiles.map { file in
            var sink = CollectedExport()
            _ = try reader.read(file, into: &sink)
            return sink
        }
    }
}

enum ExportFixtures {
    static let root = RankingsBinary.packageRoot.appendingPathComponent("Tests/fixtures/firestore-export")
    static var emulator: URL { root.appendingPathComponent("emulator") }

    /// The export's root folder inside a fixture (firestore_export_…).
    static func exportRoot(_ fixture: URL) throws -> URL {
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.path)
        let name = try #require(names.first { $0.hasPrefix("firestore_export_") })
        return fixture.appendingPathComponent(name)
    }

    /// Copies a fixture's export into a fresh temporary directory, to damage it.
    static func copy(_ fixture: URL) throws -> URL {
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: try exportRoot(fixture), to: target)
        return target
    }

    struct Expected {
        var events: [CollectedExport.Event]
        var badReasons: [String]
        var leftOut: Int
    }

    /// The fixture's expected events (what the client's own view implies), ignoring record numbers.
    static func expected(_ fixture: URL) throws -> Expected {
        let text = try String(contentsOf: fixture.appendingPathComponent("expected.ndjson"), encoding: .utf8)
        var events: [CollectedExport.Event] = []
        var bad: [String] = []
        for line in text.split(separator: "\n") {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let id = try #require(object["id"] as? String)
            if let reason = object["bad"] as? String {
                bad.append("invalid record: " + reason)
                continue
            }
            events.append(CollectedExport.Event(
                id: id, jokeID: try #require(object["joke_id"] as? String),
                rating: try #require((object["rating"] as? NSNumber)?.doubleValue),
                timestampMicros: (object["timestamp_us"] as? NSNumber)?.int64Value,
                deviceID: object["device_id"] as? String, weekID: object["week_id"] as? String, record: 0))
        }
        let leftOut = try String(contentsOf: fixture.appendingPathComponent("expected-left-out"), encoding: .utf8)
        return Expected(events: events.sorted(), badReasons: bad.sorted(),
                        leftOut: try #require(Int(leftOut.trimmingCharacters(in: .whitespacesAndNewlines))))
    }
}

extension CollectedExport.Event {
    /// The same event without where it was read (record numbers differ between readers).
    var unplaced: CollectedExport.Event {
        var copy = self
        copy.record = 0
        return copy
    }
}

extension ExportFileReader {
    /// Opens `file` and reads it (or its `blocks`) as `read(_:descriptor:blocks:into:)` does;
    /// the product opens each file once, in the aggregator, and passes the descriptor down.
    mutating func read<S: ExportSink & ~Copyable>(
        _ file: ExportOutputFile, blocks: Range<Int64>? = nil, into sink: inout S
    ) throws(InputError) -> Int {
        let fd = open(file.displayPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: file.displayPath, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        return try read(file, descriptor: fd, blocks: blocks, into: &sink)
    }
}
