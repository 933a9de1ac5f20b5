// swift-tools-version:6.0
import PackageDescription

// Tests/Fuzz/sanitizers.sh builds a sanitizer's suites alone: RANKINGS_TEST_EXCLUDE names the
// files under Tests/RankingsKitTests that hold only other suites. Unset, as everywhere else, the
// target is every file there.
let testsLeftOut = Context.environment["RANKINGS_TEST_EXCLUDE"]?.split(separator: " ").map(String.init) ?? []

let package = Package(
    name: "rankings",
    products: [
        .executable(name: "rankings", targets: ["rankings"]),
        .library(name: "RankingsKit", targets: ["RankingsKit"]),
    ],
    targets: [
        // The system zlib, for gzip-compressed exports; no Swift package involved.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // Our own C: the SIMD scanning kernels, CRC-32C for managed exports (both chosen by CPU
        // feature at run time), the managed exports' entity walker, and ISA-L's inflate loaded
        // at run time.
        .target(name: "CKernels", linkerSettings: [.linkedLibrary("z")]),
        // Linux calls Glibc hides behind _GNU_SOURCE (O_TMPFILE, renameat2), header only.
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .target(name: "RankingsKit", dependencies: ["CZlib", "CKernels", "CLinux"]),
        .executableTarget(name: "rankings", dependencies: ["RankingsKit"]),
        .testTarget(name: "RankingsKitTests", dependencies: ["RankingsKit", "rankings"], exclude: testsLeftOut),
    ],
    swiftLanguageModes: [.v6]
)
