import CKernels

/// The LevelDB log format that a managed export's output files (and its overall metadata) are
/// written in, with its numbers from schema.h: the file is a sequence of 32 KiB blocks; each
/// block holds fragments, each behind a 7-byte header (masked CRC-32C, little-endian length,
/// type); a record too long for what is left of a block is cut into FIRST, MIDDLE… and LAST
/// fragments; fewer than 7 bytes left at a block's end are a zero trailer. Every block starts
/// with a header, which is what lets a file be read in ranges of whole blocks.
enum LogFormat {
    static let blockSize = Int(RK_LOG_BLOCK_SIZE)
    static let headerSize = Int(RK_LOG_HEADER_SIZE)

    /// What a header says about its fragment. Type 0 is not written by the log writer; a header
    /// of zeros is a preallocated stretch whose remaining bytes in the block must all be zero.
    enum FragmentType {
        case zero, full, first, middle, last

        /// The type of a header's byte; nil for none.
        init?(_ raw: UInt8) {
            switch Int32(raw) {
            case RK_LOG_ZERO: self = .zero
            case RK_LOG_FULL: self = .full
            case RK_LOG_FIRST: self = .first
            case RK_LOG_MIDDLE: self = .middle
            case RK_LOG_LAST: self = .last
            default: return nil
            }
        }

        var raw: UInt8 {
            switch self {
            case .zero: UInt8(RK_LOG_ZERO)
            case .full: UInt8(RK_LOG_FULL)
            case .first: UInt8(RK_LOG_FIRST)
            case .middle: UInt8(RK_LOG_MIDDLE)
            case .last: UInt8(RK_LOG_LAST)
            }
        }

        var name: String {
            switch self {
            case .zero: "zero"
            case .full: "FULL"
            case .first: "FIRST"
            case .middle: "MIDDLE"
            case .last: "LAST"
            }
        }
    }

    /// The checksum a header stores: CRC-32C of the type byte and the fragment's bytes, masked
    /// (rotated and offset) because a CRC of data that holds CRCs is weak.
    @inline(__always)
    static func checksum(type: UInt8, _ data: UnsafeRawPointer, count: Int) -> UInt32 {
        var t = type
        let crc = rk_crc32c_extend(rk_crc32c_extend(0, &t, 1), data, count)
        return ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}
