import CKernels
import Foundation
import Testing

/// One CPU level for the whole process (Sources/CKernels/cpu_level.c), lowered by `RANKINGS_CPU`:
/// the level is what /proc/cpuinfo says the CPU has, it covers every feature any kernel is
/// compiled for, nothing else asks the CPU or reads the override, every level gives the same
/// answers, and a value the process cannot honour stops the front end with status 64.
@Suite("CPU level")
struct CPULevelTests {
    static let root = RankingsBinary.packageRoot

    /// Features as `target` attributes spell them, as /proc/cpuinfo does where that differs.
    static let cpuinfoName = ["sse4.2": "sse4_2", "pclmul": "pclmulqdq"]

    static func features(_ level: Int32) -> Set<String> {
        Set(String(cString: rk_cpu_features(level)).split(separator: ",").map(String.init))
    }

    @Test func theLevelIsTheHighestWhoseFeaturesProcCpuinfoLists() throws {
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        // x86-64 lists "flags"; other architectures list no x86 feature and run portable.
        let flags = Set(info.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? [])
        let listed = { (level: Int32) in Self.features(level).allSatisfy { flags.contains(Self.cpuinfoName[$0] ?? $0) } }
        let expected = listed(RK_CPU_AVX512) ? RK_CPU_AVX512 : listed(RK_CPU_AVX2) ? RK_CPU_AVX2 : RK_CPU_PORTABLE
        #expect(rk_cpu_supported() == expected, "flags: \(flags.sorted())")
    }

    @Test func theRequiredLevelIsOneThisCPUHas() {
        // CI's RANKINGS_REQUIRE_CPU (CPUAvailability): a misspelt value or a machine below it fails here.
        #expect(CPUAvailability.required <= rk_cpu_supported(),
                "RANKINGS_REQUIRE_CPU=\(ProcessInfo.processInfo.environment["RANKINGS_REQUIRE_CPU"] ?? ""), this CPU: \(CPUAvailability.names[rk_cpu_supported()]!)")
    }

    static func sources(_ extensions: [String]) throws -> [(name: String, text: String)] {
        let directory = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { extensions.contains($0.pathExtension) }
        return try files.map { ($0.path.replacingOccurrences(of: directory.path + "/", with: ""), try String(contentsOf: $0, encoding: .utf8)) }
    }

    @Test func everyKernelIsCompiledForFeaturesItsLevelChecks() throws {
        // Every `target("…")` attribute, and every string a macro named …TARGET gives one.
        let pattern = try Regex(#"target\("([^"]+)"\)|#define \w*TARGET\w*\s+(?:__attribute__\(\(target\()?"([^"]+)""#)
        var seen = 0
        for (name, text) in try Self.sources(["c", "h"]) {
            for match in text.matches(of: pattern) {
                let list = (match.output[1].substring ?? match.output[2].substring).map(String.init) ?? ""
                let unchecked = Set(list.split(separator: ",").map(String.init)).subtracting(Self.features(RK_CPU_AVX512))
                #expect(unchecked.isEmpty, "\(name): target \"\(list)\" needs \(unchecked.sorted()), which no level checks")
                seen += 1
            }
        }
        #expect(seen > 5)
    }

    @Test func nothingButCpuLevelAsksTheCPUOrReadsTheOverride() throws {
        let asks = ["__builtin_cpu_supports", "__builtin_cpu_init", "__cpuid", "getauxval", "xgetbv", "\"RANKINGS_CPU\"",
                    "RANKINGS_SCALAR_SCAN", "__attribute__((constructor))"]
        for (name, text) in try Self.sources(["c", "h", "swift"]) where name != "CKernels/cpu_level.c" {
            for word in asks where text.contains(word) {
                Issue.record("\(name) uses \(word): the CPU level is decided in Sources/CKernels/cpu_level.c only")
            }
        }
    }

    /// `rankings` with `RANKINGS_CPU` set to `level` (removed when nil), under `qemu` (the
    /// emulator's command and CPU model) when given.
    static func run(_ arguments: [String], cpu level: String?, qemu: [String]? = nil) throws -> RankingsBinary.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["RANKINGS_CPU"] = level
        guard let qemu else { return try RankingsBinary.run(arguments, environment: environment) }
        return try RankingsBinary.run(Array(qemu.dropFirst()) + [RankingsBinary.url.path] + arguments, environment: environment,
                                      executable: qemu[0])
    }

    static func cpuLine(_ result: RankingsBinary.Result) -> String {
        result.stdoutText.split(separator: "\n").first { $0.hasPrefix("cpu: ") }.map(String.init) ?? result.stderrText
    }

    @Test func versionSaysTheLevelAndWhy() throws {
        let native = Self.cpuLine(try Self.run(["--version"], cpu: nil))
        if rk_cpu_supported() == RK_CPU_AVX512 {
            #expect(native == "cpu: avx512")
        } else {
            #expect(native.hasPrefix("cpu: \(CPUAvailability.names[rk_cpu_supported()]!) (this CPU lacks "), "\(native)")
        }
        for level in [RK_CPU_PORTABLE, RK_CPU_AVX2, RK_CPU_AVX512] where level <= rk_cpu_supported() {
            let name = CPUAvailability.names[level]!
            #expect(Self.cpuLine(try Self.run(["--version"], cpu: name)) == "cpu: \(name) (RANKINGS_CPU)")
        }
        // Unset and empty are the same.
        #expect(Self.cpuLine(try Self.run(["--version"], cpu: "")) == native)
    }

    /// A flat export, typed Document lines (gzip), and a managed export (with 18 bad records).
    static var inputs: [String] {
        ["sample-data/rating_events.ndjson", "sample-data/typed/rating_events.typed.ndjson.gz",
         "Tests/fixtures/firestore-export/emulator/firestore_export_1795463520"]
            .map { root.appendingPathComponent($0).path }
    }

    static func answers(cpu level: String?, qemu: [String]? = nil) throws -> [String] {
        try inputs.map { input in
            let result = try run(["aggregate", "-q", "--max-invalid", "100", "--computed-at", fixedComputedAt, "--top", "50", input], cpu: level, qemu: qemu)
            return "status \(result.status)\n\(result.stdoutText)\(result.stderrText)"
        }
    }

    @Test func everyLevelGivesTheSameAnswers() throws {
        let native = try Self.answers(cpu: nil)
        #expect(native.allSatisfy { $0.hasPrefix("status 0\n") }, "\(native)")
        for level in [RK_CPU_PORTABLE, RK_CPU_AVX2, RK_CPU_AVX512] where level <= rk_cpu_supported() {
            #expect(try Self.answers(cpu: CPUAvailability.names[level]!) == native, "RANKINGS_CPU=\(CPUAvailability.names[level]!)")
        }
    }

    @Test(arguments: ["bogus", "AVX2", "native", " avx2", "portable,avx2"])
    func aValueThatIsNoLevelIsRefused(_ value: String) throws {
        try ScratchDirectory.with { dir in
            _ = try dir.write("all_time.json", "old")
            let result = try Self.run(["aggregate", "-o", dir.path("all_time.json"), Self.inputs[0]], cpu: value)
            #expect(result.status == 64)
            #expect(result.stderrText == "rankings: error: RANKINGS_CPU=\(value) is not a level: portable, avx2 or avx512\n")
            #expect(result.stdout.isEmpty)
            #expect(try dir.read("all_time.json") == Array("old".utf8))
            #expect(try dir.listing() == ["all_time.json"])
        }
        #expect(try Self.run(["--version"], cpu: value).status == 64)
    }

    /// QEMU's user-mode emulator, whose CPU models lack what this machine has: `max` has AVX2
    /// but no AVX-512, `qemu64` neither. Nil (the test cancelled; failed where CI requires the
    /// CPU levels) when qemu-user is not installed.
    static func qemu() throws -> String? {
        let path = "/usr/bin/qemu-x86_64"
        #if arch(x86_64)
        // A sanitizer's binary maps its shadow memory where qemu-user keeps its own, so it dies
        // at start under the emulator; both plain suite runs of .ci/run hold this test.
        if Sanitizer.isOn { try Test.cancel("qemu-user cannot run a sanitizer's binary (its shadow memory)") }
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        let why = "needs qemu-user (\(path)) to emulate a CPU below this one"
        if CPUAvailability.required > 0 { throw CPUAvailability.Missing(description: why) }
        try Test.cancel(Comment(rawValue: why))
        #else
        try Test.cancel("x86-64 only")
        #endif
    }

    @Test func aLevelAboveTheCPUsIsRefusedAndALowerCPURunsItsOwn() throws {
        guard let qemu = try Self.qemu() else { return }
        let cases = [("max", "avx512", "avx2", "avx512f, avx512bw, avx512vl, vpclmulqdq"),
                     ("qemu64", "avx2", "portable", "avx2, sse4.2")]
        let native = try Self.answers(cpu: nil)
        for (model, above, own, lacks) in cases {
            let emulated = [qemu, "-cpu", model]
            let refused = try Self.run(["aggregate", Self.inputs[0]], cpu: above, qemu: emulated)
            #expect(refused.status == 64, "\(model)")
            #expect(refused.stderrText == "rankings: error: RANKINGS_CPU=\(above): this CPU lacks \(lacks)\n", "\(model)")
            #expect(refused.stdout.isEmpty)
            #expect(Self.cpuLine(try Self.run(["--version"], cpu: nil, qemu: emulated)) == "cpu: \(own) (this CPU lacks \(lacks))")
            // Every kernel keeps to the level: one instruction above it would stop the emulator.
            #expect(try Self.answers(cpu: nil, qemu: emulated) == native, "\(model)")
        }
    }
}
