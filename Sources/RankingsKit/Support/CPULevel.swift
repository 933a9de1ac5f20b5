import CKernels

/// The SIMD level the whole process runs at, decided once in C (Sources/CKernels/cpu_level.c,
/// `RANKINGS_CPU`), for the front end to report or refuse.
public enum CPULevel {
    /// `--version`'s line: `cpu: LEVEL`, and why when it is not the CPU's own.
    public static var description: String { String(cString: rk_cpu_description()) }

    /// Why `RANKINGS_CPU` cannot be honoured (an unknown value, or a level this CPU lacks), or nil.
    public static var refusal: String? { rk_cpu_refusal().map { String(cString: $0) } }
}
