import Foundation
import Testing
@testable import RankingsKit

/// How Tests/firestore-export/run.sh gets our reading of an emulator export out, to hold it to
/// Google's client and to leveldb-export: with RANKINGS_EXPORT_DUMP_IN (an export directory)
/// and RANKINGS_EXPORT_DUMP_OUT (a file) set, writes one JSON line per record, in file order.
/// Without them it has nothing to do (the script fails when the file is not written).
@Suite("Managed export: dump for the emulator script")
struct ExportDumpForScript {
    @Test("dump an export named by the environment")
    func dump() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let input = environment["RANKINGS_EXPORT_DUMP_IN"], let output = environment["RANKINGS_EXPORT_DUMP_OUT"] else { return }
        let export = try #require(try ManagedExport.open(input))
        var lines: [String] = []
        for (file, read) in zip(export.outputFiles, try CollectedExport.read(export)) {
            var records: [(Int, [String: Any])] = []
            for event in read.events {
                var object: [String: Any] = ["verdict": "event", "id": event.id, "joke_id": event.jokeID, "rating": event.rating]
                if let micros = event.timestampMicros { object["timestamp_us"] = micros }
                if event.timestampUnreadable != nil { object["timestamp_unreadable"] = true }
                if let device = event.deviceID { object["device_id"] = device }
                if let week = event.weekID { object["week_id"] = week }
                records.append((event.record, object))
            }
            records += read.bad.map { ($0.record, ["verdict": "bad", "reason": $0.reason]) }
            records += read.leftOut.map { ($0, ["verdict": "left out"]) }
            for (number, var object) in records.sorted(by: { $0.0 < $1.0 }) {
                object["file"] = file.displayPath
                object["record"] = number
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                lines.append(String(decoding: data, as: UTF8.self))
            }
        }
        try (lines.map { $0 + "\n" }.joined()).write(toFile: output, atomically: true, encoding: .utf8)
    }
}
