import Glibc

/// The program's two clocks, in one place: monotonic time for durations (a run's seconds, the
/// progress line's rate), which no clock change can make negative; and the wall clock for
/// instants (`computed_at`'s default, the metrics file's timestamps).
public enum Clock {
    static var now: timespec {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t
    }

    static func seconds(since start: timespec) -> Double {
        let t = now
        return Double(t.tv_sec - start.tv_sec) + Double(t.tv_nsec - start.tv_nsec) / 1e9
    }

    /// The current instant, to the whole second.
    public static var wallTime: Timestamp {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Timestamp(seconds: Int64(t.tv_sec))
    }
}
