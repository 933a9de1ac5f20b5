import Glibc

/// An IANA time zone such as `America/New_York`, read from the system's compiled tz database
/// (`$TZDIR`, else /usr/share/zoneinfo), the same files the C library uses.
public struct IANAZone: Sendable {
    let identifier: String
    let rules: TZifFile

    /// The zone `America/New_York` when `--time-zone` is not given.
    static let defaultIdentifier = "America/New_York"

    /// That zone from the database, read once, when first needed; nil when the database lacks it.
    static let defaultZone = IANAZone(identifier: defaultIdentifier)

    /// Nil for a name that is not a zone of the database: unknown, not a TZif file, or trying
    /// to leave the database's directory. `UTC` and `GMT` need no database.
    public init?(identifier: String, directory: String = IANAZone.databaseDirectory) {
        if identifier == "UTC" || identifier == "GMT" {
            self.identifier = identifier
            rules = TZifFile(utcOffset: 0)
            return
        }
        guard Self.isZoneName(identifier), let bytes = SmallFile.read(directory + "/" + identifier),
              let rules = TZifFile(bytes) else { return nil }
        self.identifier = identifier
        self.rules = rules
    }

    /// Seconds east of UTC that the zone's clocks show at `instant` (seconds since 1970-01-01Z).
    func secondsFromUTC(at instant: Int64) -> Int { rules.secondsFromUTC(at: instant) }

    /// The usage error for a name that is not a zone; it says where zones were looked for when
    /// there is no database at all (a system without the tzdata package).
    public static func unknownMessage(_ name: String) -> String {
        let message = "--time-zone takes an IANA zone like America/New_York, not '\(name)'"
        var st = stat()
        return stat(databaseDirectory, &st) == 0 ? message : message + " (no time zone database at \(databaseDirectory))"
    }

    public static var databaseDirectory: String {
        if let dir = getenv("TZDIR"), dir.pointee != 0 { return String(cString: dir) }
        return "/usr/share/zoneinfo"
    }

    /// Relative, made of non-empty parts of letters, digits, `_`, `-`, `+` (so no `.` or `..`);
    /// not `localtime` (a link to this machine's /etc/localtime), `posixrules` (a compiler
    /// default) or the `posix/` and `right/` copies of the database: they name no zone of their
    /// own, and Foundation refused them too.
    static func isZoneName(_ name: String) -> Bool {
        if name == "localtime" || name == "posixrules" || name.hasPrefix("posix/") || name.hasPrefix("right/") {
            return false
        }
        let parts = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { c in
                (c | 0x20) &- UInt8(ascii: "a") < 26 || c &- UInt8(ascii: "0") < 10
                    || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
            }
        }
    }
}
