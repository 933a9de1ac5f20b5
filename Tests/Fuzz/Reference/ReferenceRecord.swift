/// The input rules of docs/input-rules.md, read literally, on top of `RefJSON`.
enum RefRecord {
    enum Verdict: Equatable, CustomStringConvertible {
        case blank
        case malformed
        /// A valid JSON text that is not a usable record; `why` names the first rule broken
        /// in the rules' order (object, joke_id, rating).
        case invalid(String)
        case valid(id: [UInt8], rating: Double)

        var description: String {
            switch self {
            case .blank: "blank"
            case .malformed: "malformed"
            case .invalid(let why): "invalid(\(why))"
            case .valid(let id, let rating): "valid(id: \(id), rating: \(rating))"
            }
        }
    }

    enum Kind: Equatable { case hilarious, horrible, neutral }

    static func kind(_ rating: Double) -> Kind {
        rating >= 4 ? .hilarious : rating <= 2 ? .horrible : .neutral
    }

    static func isBlank(_ line: [UInt8]) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// The last top-level member named `name` (keys compared after unescaping).
    static func field(_ members: [RefJSON.Member], _ name: String) -> RefJSON.Member? {
        let key = Array(name.utf8)
        return members.last { $0.key.bytes == key && !$0.key.hasLoneSurrogate }
    }

    /// A JSON number's text to the nearest double, by the standard library's own conversion.
    static func double(_ text: [UInt8]) -> Double {
        Double(String(decoding: text, as: UTF8.self))!
    }

    static func judge(_ line: [UInt8]) -> Verdict {
        if isBlank(line) { return .blank }
        guard let value = RefJSON.parse(line) else { return .malformed }
        guard case .object(let members) = value else { return .invalid("notObject") }
        guard let joke = field(members, "joke_id") else { return .invalid("missingJokeID") }
        guard case .string(let id) = joke.value else { return .invalid("jokeIDNotString") }
        if id.bytes.isEmpty { return .invalid("emptyJokeID") }
        if id.hasLoneSurrogate { return .invalid("jokeIDLoneSurrogate") }
        // Firestore cannot query a string of 1,500 bytes or more by equality.
        if id.bytes.count >= 1500 { return .invalid("jokeIDTooLong(bytes: \(id.bytes.count))") }
        guard let rating = field(members, "rating") else { return .invalid("missingRating") }
        guard case .number(let text) = rating.value else { return .invalid("ratingNotNumber") }
        let v = double(text)
        guard v >= 1 && v <= 5 else { return .invalid("ratingOutOfRange") }
        return .valid(id: id.bytes, rating: v)
    }

    /// A whole file's lines as docs/input-rules.md defines them: split at `\n`, the last one may lack it,
    /// one BOM skipped at the very start.
    static func lines(of file: [UInt8]) -> [[UInt8]] {
        var bytes = file[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        for b in bytes {
            if b == 0x0A { lines.append(current); current = [] } else { current.append(b) }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// Per-joke counts of a run with no filters: what `Tally` must hold.
    struct Counts: Equatable { var hilarious = 0, horrible = 0, neutral = 0 }

    struct Run: Equatable {
        var jokes: [[UInt8]: Counts] = [:]
        /// Line numbers (from 1) of the bad lines.
        var badLines: [Int] = []
    }

    static func run(_ file: [UInt8]) -> Run {
        var run = Run()
        for (index, line) in lines(of: file).enumerated() {
            switch judge(line) {
            case .blank: break
            case .malformed, .invalid: run.badLines.append(index + 1)
            case .valid(let id, let rating):
                switch kind(rating) {
                case .hilarious: run.jokes[id, default: Counts()].hilarious += 1
                case .horrible: run.jokes[id, default: Counts()].horrible += 1
                case .neutral: run.jokes[id, default: Counts()].neutral += 1
                }
            }
        }
        return run
    }
}
