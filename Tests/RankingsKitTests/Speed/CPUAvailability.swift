import CKernels
import Foundation
import Testing

/// Whether a test that holds one level's kernels to their reference can run here. Such a test
/// names the kernel it wants, so it runs wherever the CPU has it, whatever `RANKINGS_CPU` says
/// (that governs the product's choice only). Where the CPU lacks the level, the test is cancelled
/// with the reason; CI sets `RANKINGS_REQUIRE_CPU=avx512` (.ci/run), and then it fails instead for
/// every level up to that one, as `RANKINGS_REQUIRE_ISAL=1` does for ISA-L.
enum CPUAvailability {
    static let names: [Int32: String] = [RK_CPU_PORTABLE: "portable", RK_CPU_AVX2: "avx2", RK_CPU_AVX512: "avx512"]

    /// The level `RANKINGS_REQUIRE_CPU` names; 0 when unset, `Int32.max` for a value that is no
    /// level (CPULevelTests fails on it, and every test that needs a level fails with it).
    static let required: Int32 = {
        guard let value = ProcessInfo.processInfo.environment["RANKINGS_REQUIRE_CPU"], !value.isEmpty else { return 0 }
        return names.first { $0.value == value }?.key ?? .max
    }()

    /// For a suite: true when it should run (the CPU has `level`, or CI requires it and it fails).
    static func runs(_ level: Int32) -> Bool { rk_cpu_supported() >= level || required >= level }

    static func reason(_ level: Int32) -> Comment {
        Comment(rawValue: "needs CPU level \(names[level]!), this CPU's is \(names[rk_cpu_supported()]!) "
            + "(RANKINGS_REQUIRE_CPU=\(names[level]!) or higher makes this a failure, as in CI)")
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// For a test: returns when the CPU has `level`; otherwise cancels the test, or fails it
    /// when `RANKINGS_REQUIRE_CPU` requires the level. Not for a parametrized test: a cancelled
    /// case does not show in the run's output.
    static func need(_ level: Int32) throws {
        if rk_cpu_supported() >= level { return }
        if required >= level { throw Missing(description: reason(level).rawValue) }
        try Test.cancel(reason(level))
    }
}
