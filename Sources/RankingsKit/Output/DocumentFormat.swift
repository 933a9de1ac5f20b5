/// How a rankings document is written: our JSON (`--format json`), or the same content as the
/// body of a Firestore REST write (`--format firestore`), typed the way the app's decoder reads
/// it from Firestore.
public enum DocumentFormat: String, Sendable, CaseIterable {
    case json
    case firestore
}

extension RankingsDocument {
    func bytes(in format: DocumentFormat) -> [UInt8] {
        switch format {
        case .json: json()
        case .firestore: firestore()
        }
    }
}
