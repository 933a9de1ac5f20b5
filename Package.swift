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
        .target(name: "RankingsKit", dependencies: ["CZlib"]),
        .executableTarget(name: "rankings", dependencies: ["RankingsKit"]),
        .testTarget(name: "RankingsKitTests", dependencies: ["RankingsKit", "rankings"]),
    ],
    swiftLanguageModes: [.v6]
)
