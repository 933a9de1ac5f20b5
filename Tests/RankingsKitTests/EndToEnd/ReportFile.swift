import Foundation

/// Reads the `--report` summary; only the counts are compared exactly, `seconds` just has to be a
/// number because it measures time.
enum ReportFile {
    struct Counts: Equatable, CustomStringConvertible {
        var validEvents, hilarious, horrible, neutral, badLines, distinctJokes, inputBytes: Int

        init(validEvents: Int, hilarious: Int, horrible: Int, neutral: Int, badLines: Int,
             distinctJokes: Int, inputBytes: Int) {
            (self.validEvents, self.hilarious, self.horrible, self.neutral) = (validEvents, hilarious, horrible, neutral)
            (self.badLines, self.distinctJokes, self.inputBytes) = (badLines, distinctJokes, inputBytes)
        }

        init(_ s: ReferenceAggregator.Summary) {
            self.init(validEvents: s.validEvents, hilarious: s.hilarious, horrible: s.horrible, neutral: s.neutral,
                      badLines: s.badLines, distinctJokes: s.distinctJokes, inputBytes: s.inputBytes)
        }

        var description: String {
            "valid_events \(validEvents), hilarious \(hilarious), horrible \(horrible), neutral \(neutral), "
                + "bad_lines \(badLines), distinct_jokes \(distinctJokes), input_bytes \(inputBytes)"
        }
    }

    struct Missing: Error, CustomStringConvertible { var description: String }

    static func object(at path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Missing(description: "report is not a JSON object: \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }

    static func counts(at path: String) throws -> Counts {
        let object = try object(at: path)
        func int(_ key: String) throws -> Int {
            guard let n = object[key] as? NSNumber, let v = Int(exactly: n.doubleValue) else {
                throw Missing(description: "report key \(key) is missing or not an integer: \(object)")
            }
            return v
        }
        guard object["seconds"] is NSNumber else { throw Missing(description: "report lacks numeric seconds: \(object)") }
        return try Counts(validEvents: int("valid_events"), hilarious: int("hilarious"), horrible: int("horrible"),
                          neutral: int("neutral"), badLines: int("bad_lines"), distinctJokes: int("distinct_jokes"),
                          inputBytes: int("input_bytes"))
    }
}
