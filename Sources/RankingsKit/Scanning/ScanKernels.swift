import CKernels

/// The SIMD side of `JSONLineScanner`: C kernels chosen by the process's CPU level
/// (`CPULevel`). The line kernel (Sources/CKernels/line_kernel.c) reads a whole common line and
/// declines every other; the string kernel (scan_kernels.c) skips the plain bytes of a string
/// and validates its UTF-8 32 bytes a step for the scalar scanner. Neither ever words a reason:
/// the line kernel only accepts what the scalar scanner would accept with the same spans, and
/// the string kernel stops before anything it must judge, so messages and offsets stay its own.
public enum ScanKernels {
    /// On at level avx2 and above; portable runs the scalar scanner alone.
    public static let enabled = rk_cpu_level() >= RK_CPU_AVX2

    /// The whole-line kernel (line_kernel.h): the line's `\n` when it accepted the line as an
    /// object, with the wanted fields' spans in `spans`; nil when the scalar scanner must judge it.
    @inline(__always)
    static func scanLine(_ line: UnsafePointer<UInt8>, wanted: FieldSet, spans: UnsafeMutablePointer<UnsafePointer<UInt8>?>,
                         found: inout UInt32, level: Int32,
                         layouts: UnsafeMutablePointer<rk_line_layouts>?) -> UnsafePointer<UInt8>? {
        rk_scan_line(line, UInt32(wanted.rawValue), spans, &found, level, layouts)
    }

    /// The first byte at or after `p` that the scalar step must look at (see scan_kernels.h).
    @inline(__always)
    static func skipPlain(_ p: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
        rk_skip_string_plain(p)
    }
}
