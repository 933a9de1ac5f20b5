// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "rankings",
    products: [
        .executable(name: "rankings", targets: ["rankings"]),
        .library(name: "RankingsKit", targets: ["RankingsKit"]),
    ],
    targets: [
        // The system zlib, for gzip-compressed exports; no Swift package involved.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // Our own C: CRC-32C for managed exports, with the CPU's instruction chosen at run time.
        .target(name: "CKernels"),
        .target(name: "RankingsKit", dependencies: ["CZlib", "CKernels"]),
        .executableTarget(name: "rankings", dependencies: ["RankingsKit"]),
        .testTarget(name: "RankingsKitTests", dependencies: ["RankingsKit", "rankings"]),
    ],
    swiftLanguageModes: [.v6]
)
