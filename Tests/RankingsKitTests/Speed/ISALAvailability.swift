import CKernels
import Foundation
import Testing
@testable import RankingsKit

/// Whether the suites that compare with ISA-L's inflate can run here. The front page's test
/// command needs only a Swift toolchain and zlib, so where libisal.so.2 does not load they skip
/// with the reason; CI installs libisal2 and sets `RANKINGS_REQUIRE_ISAL=1` (.ci/run), and then
/// a library that does not load fails them instead of skipping them.
enum ISALAvailability {
    static let required = ProcessInfo.processInfo.environment["RANKINGS_REQUIRE_ISAL"] == "1"

    /// True when the suites should run: ISA-L loads, or CI requires it (and they fail loudly).
    static let runs = required || rk_isal_available() != 0

    static var reason: Comment {
        Comment(rawValue: "ISA-L's inflate is not loadable here (\(Inflaters.whyNotISAL)): install libisal2 and libisal-dev to run this suite; CI requires it with RANKINGS_REQUIRE_ISAL=1")
    }
}
