/// What a migration did (or, with `--dry-run`, would do) to the lines of its inputs.
///
/// Every non-blank line lands in exactly one count, so they add up to the lines read minus
/// the blank ones.
public struct MigrationCounts: Sendable, Equatable {
    /// Events whose rating was already written `5` or `1`.
    var unchanged = 0
    var rewrittenToHilarious = 0
    var rewrittenToHorrible = 0
    var droppedNeutral = 0
    /// Lines `rankings aggregate` would reject; never written.
    var badLines = 0

    init() {}

    /// Lines the output holds (or would hold).
    var written: Int { unchanged + rewrittenToHilarious + rewrittenToHorrible }

    mutating func count(_ action: ScaleMigration.Action) {
        switch action {
        case .keep: unchanged += 1
        case .rewriteToHilarious: rewrittenToHilarious += 1
        case .rewriteToHorrible: rewrittenToHorrible += 1
        case .drop: droppedNeutral += 1
        }
    }

    /// The one-line summary on stderr after a run.
    var summaryLine: String {
        "rankings: " + counted(written, "event", "events") + " written (\(unchanged) unchanged, "
            + "\(rewrittenToHilarious) rewritten to 5, \(rewrittenToHorrible) rewritten to 1), "
            + "\(droppedNeutral) neutral dropped, " + counted(badLines, "bad line", "bad lines")
    }

    /// What `--dry-run` prints on stdout: one `name: count` per line, fixed names in a fixed
    /// order, so a script can pick a number out with `grep` or `awk`.
    var dryRunReport: [UInt8] {
        let rows: [(String, Int)] = [
            ("unchanged", unchanged), ("rewritten_to_5", rewrittenToHilarious),
            ("rewritten_to_1", rewrittenToHorrible), ("dropped_neutral", droppedNeutral), ("bad_lines", badLines),
        ]
        return Array(rows.map { "\($0.0): \($0.1)\n" }.joined().utf8)
    }
}
