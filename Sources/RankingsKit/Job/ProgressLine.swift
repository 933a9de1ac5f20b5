import Glibc
import Synchronization

/// One self-updating line on a terminal: bytes done of total, rate, time left.
///
/// Appears only after a second, so short runs print nothing; erased when the run ends. The
/// front end enables it only when stderr is a terminal, so cron mail and journald stay clean.
public final class ProgressLine: @unchecked Sendable {
    private let counter: ProgressCounter
    private let total: Int64
    private var thread: pthread_t?
    private let stopped = Atomic<Bool>(false)
    private var shown = false

    public init(counter: ProgressCounter, total: Int64) {
        self.counter = counter
        self.total = total
        let box = Unmanaged.passRetained(self).toOpaque()
        var t = pthread_t()
        if pthread_create(&t, nil, { arg in
            let line = Unmanaged<ProgressLine>.fromOpaque(arg!).takeRetainedValue()
            line.loop()
            return nil
        }, box) == 0 {
            thread = t
        }
    }

    private func loop() {
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
            var text = "\r\u{1B}[K" + "rankings: " + megabytes(done)
            if total > 0 {
                text += " of " + megabytes(total) + " MB"
                if rate > 0 && total > done { text += ", \(Int(Double(total - done) / rate)) s left" }
            } else {
                text += " MB"
            }
            text += ", \(Int(rate / 1e6)) MB/s"
            write(text)
            shown = true
        }
    }

    private func megabytes(_ n: Int64) -> String { String(n / 1_000_000) }

    private func write(_ text: String) {
        var t = text
        t.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Stops the line and erases it.
    public func finish() {
        stopped.store(true, ordering: .releasing)
        if let thread { pthread_join(thread, nil) }
        thread = nil
        if shown { write("\r\u{1B}[K") }
    }
}
