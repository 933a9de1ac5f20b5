/// The kind Firestore's range filters put a document in by its `rating`:
/// `rating >= 4 AND rating <= 5` is Hilarious, `rating >= 1 AND rating <= 2` Horrible. Both
/// ends count: 6 and 0 are bad lines to the job yet no vote to Firestore's COUNT either.
enum FirestoreKind: Sendable, Equatable {
    case hilarious, horrible

    /// The kind of a value Firestore holds as a number (an integer, or a double that is not
    /// NaN, which fails both ranges); nil between the ranges and outside them.
    init?(rating: Double) {
        if rating >= 4 && rating <= 5 {
            self = .hilarious
        } else if rating >= 1 && rating <= 2 {
            self = .horrible
        } else {
            return nil
        }
    }

    /// As `--report` writes it.
    var name: String {
        switch self {
        case .hilarious: "hilarious"
        case .horrible: "horrible"
        }
    }
}

/// What `--report` says of a refused record besides where it is and why: its document, its
/// joke id and the kind Firestore would count it in, so that a proof against Firestore's own
/// COUNTs can add the refused documents those COUNTs still match without reading any record
/// itself. Worked out only for the bad lines a run keeps, so a run without bad lines never
/// makes one.
struct RefusedRecord: Sendable, Equatable {
    /// `projects/P/databases/D/documents/rating_events/ID`: a typed line's `name`, an export
    /// entity's key as that path; nil for a flat record, which names no document.
    var document: [UInt8]?
    /// The `joke_id` when it is a string of valid Unicode (empty and over-long ones included).
    var jokeID: [UInt8]?
    var kind: FirestoreKind?

    init(document: [UInt8]? = nil, jokeID: [UInt8]? = nil, kind: FirestoreKind? = nil) {
        (self.document, self.jokeID, self.kind) = (document, jokeID, kind)
    }

    /// A line that is not a JSON object (malformed, too long, an array): nothing to name.
    static let unknown = RefusedRecord()
}

/// The run's selection as Firestore's COUNT of a kind would apply it: a document counts there
/// only when its `timestamp` is a Timestamp within `--since`/`--as-of`, and its `week_id` the
/// string of `--week`. (`--dedupe` is no filter Firestore has.)
struct KindWindow: Sendable {
    var since: Timestamp?
    var asOf: Timestamp?
    var week: [UInt8]?

    /// `--since` or `--as-of`: the kind needs a timestamp within them.
    var readsTimestamp: Bool { since != nil || asOf != nil }

    /// The kind of a document whose rating is `rating` when Firestore holds it as a number (nil
    /// when it holds no number there, or none at all), whose timestamp is `timestamp` when it
    /// is a Timestamp, and whose `week_id` is `week` when it is a string.
    func kind(rating: Double?, timestamp: Timestamp?, week weekID: [UInt8]?) -> FirestoreKind? {
        guard let rating, let kind = FirestoreKind(rating: rating) else { return nil }
        if readsTimestamp {
            guard let timestamp else { return nil }
            if let since, timestamp < since { return nil }
            if let asOf, timestamp > asOf { return nil }
        }
        if let week, weekID != week { return nil }
        return kind
    }
}

/// One bad line or record of a piece of input, as `--report` lists it.
struct RefusedLine: Sendable {
    /// Counted from 1 within the piece, then (once merged) within the file.
    var line: Int
    var reason: BadRecord
    var record: RefusedRecord
}
