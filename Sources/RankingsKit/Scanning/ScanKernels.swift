import CKernels
import Glibc

/// The SIMD side of `JSONLineScanner`: C kernels chosen by CPU feature (AVX-512 for the line
/// kernel where the CPU has it, AVX2, else SSSE3). The
/// line kernel (Sources/CKernels/line_kernel.c) reads a whole common line and declines every
/// other; the string kernel (scan_kernels.c) skips the plain bytes of a string and validates
/// its UTF-8 32 or 16 bytes a step for the scalar scanner. Neither ever words a reason: the
/// line kernel only accepts what the scalar scanner would accept with the same spans, and the
/// string kernel stops before anything it must judge, so messages and offsets stay its own.
public enum ScanKernels {
    /// On when the CPU has the kernels, unless `RANKINGS_SCALAR_SCAN=1` (read once) turns them off:
    /// the test suite runs once more that way, and the scalar path is what aarch64 runs.
    public static let enabled: Bool = {
        if let off = getenv("RANKINGS_SCALAR_SCAN"), off.pointee != 0, String(cString: off) != "0" { return false }
        return rk_scan_kernel_level() > 0
    }()

    /// For `--version`: which scanner this process runs.
    public static var description: String {
        switch (enabled, rk_scan_kernel_level()) {
        case (true, 2) where rk_line_kernel_level() == 3: "scanner: AVX-512"
        case (true, 2): "scanner: AVX2"
        case (true, _): "scanner: SSSE3"
        case (false, 0): "scanner: scalar (no SIMD kernel for this CPU)"
        default: "scanner: scalar (RANKINGS_SCALAR_SCAN=1)"
        }
    }

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
