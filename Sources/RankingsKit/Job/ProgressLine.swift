import Glibc
import Synchronization

/// One self-updating line on a terminal: bytes done of total, rate, time left.
///
/// Appears only after a second, so short runs print nothing; erased when the run ends. The
/// front end enables it only when stderr is a terminal, so cron mail and journald stay clean.
/// The line owns its thread: `finish`, or letting go of the line, stops and joins it.
final class ProgressLine {
    private let ticker: Ticker
    private var thread: NativeThread?

    init(counter: ProgressCounter, total: Int64) {
        let ticker = Ticker(counter: counter, total: total)
        self.ticker = ticker
        thread = NativeThread(stackSize: 256 << 10) { ticker.run() }
    }

    deinit { finish() }

    /// Stops the line and erases it.
    func finish() {
        guard let thread else { return }
        ticker.stopped.store(true, ordering: .releasing)
        thread.join()
        self.thread = nil
        if ticker.shown.load(ordering: .acquiring) { Ticker.write("\r\u{1B}[K") }
    }

    /// What the thread works with; it holds no reference back to the line, so the line's
    /// `deinit` can run while the thread is still going, and stop it.
    private final class Ticker: Sendable {
        let counter: ProgressCounter
        let total: Int64
        let stopped = Atomic<Bool>(false)
        let shown = Atomic<Bool>(false)

        init(counter: ProgressCounter, total: Int64) {
            self.counter = counter
            self.total = total
        }

        func run() {
            let start = Clock.now
            while true {
                // Sleep in small steps so `finish` does not wait long.
                for _ in 0..<4 {
                    usleep(50_000)
                    if stopped.load(ordering: .acquiring) { return }
                }
                let elapsed = Clock.seconds(since: start)
                guard elapsed >= 1 else { continue }
                let done = counter.bytesDone
                let rate = Double(done) / elapsed
                var text = "\r\u{1B}[K" + "rankings: " + String(done / 1_000_000)
                if total > 0 {
                    text += " of " + String(total / 1_000_000) + " MB"
                    if rate > 0 && total > done { text += ", \(Int(Double(total - done) / rate)) s left" }
                } else {
                    text += " MB"
                }
                text += ", \(Int(rate / 1e6)) MB/s"
                Self.write(text)
                shown.store(true, ordering: .releasing)
            }
        }

        static func write(_ text: String) {
            var t = text
            t.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
        }
    }
}
