import CKernels
import Foundation
import Testing
@testable import RankingsKit

/// `--version` names the inflater the binary really uses and, when it is zlib, the true reason:
/// a binary built without ISA-L's header says so (installing libisal2 would not change it), one
/// built with it says the library did not load. The test process is built from the same
/// sources with the same flags as the binary, so it knows which of the two the binary is.
@Suite("--version and ISA-L")
struct VersionTests {
    static func gzipLine(inflate: String?) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["RANKINGS_INFLATE"] = inflate
        let result = try RankingsBinary.run(["--version"], environment: environment)
        #expect(result.status == 0, "\(result.stderrText)")
        return result.stdoutText.split(separator: "\n").first { $0.hasPrefix("gzip: ") }.map(String.init) ?? ""
    }

    static var zlibReason: String {
        rk_isal_built_in() == 0 ? "(built without ISA-L)" : "(libisal.so.2 not found)"
    }

    @Test func saysWhatThisBuildUses() throws {
        let line = try Self.gzipLine(inflate: nil)
        if rk_isal_available() != 0 {
            #expect(line == "gzip: ISA-L (libisal.so.2, loaded at run time)")
        } else {
            #expect(line.hasPrefix("gzip: zlib ") && line.hasSuffix(Self.zlibReason), "\(line)")
        }
    }

    @Test func zlibOnRequestSaysItWasAsked() throws {
        let line = try Self.gzipLine(inflate: "zlib")
        let reason = rk_isal_available() != 0 ? "(RANKINGS_INFLATE=zlib)" : Self.zlibReason
        #expect(line.hasPrefix("gzip: zlib ") && line.hasSuffix(reason), "\(line)")
    }
}

/// The version the binary says is the library's, and the first line scripts read.
@Suite("--version's version")
struct VersionNumberTests {
    @Test func isTheRelease() throws {
        let result = try RankingsBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdoutText.split(separator: "\n").first == "rankings 0.5.0")
        #expect(RankingsKitVersion.string == "0.5.0")
    }
}
