import Foundation

/// Whether the suite runs under a sanitizer: Tests/Fuzz/sanitizers.sh sets
/// `RANKINGS_TEST_SANITIZER=address` or `thread`. There every memory access costs several times
/// more, so the longest corpus tests read a smaller corpus that takes the same paths (each test
/// says what it keeps); everywhere else they read the full one.
enum Sanitizer {
    static let isOn = ProcessInfo.processInfo.environment["RANKINGS_TEST_SANITIZER"] != nil
}
