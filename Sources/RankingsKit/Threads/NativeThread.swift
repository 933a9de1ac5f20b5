import Glibc

/// A POSIX thread with a stack of a chosen size, running one closure.
///
/// Each worker and read-ahead thread is a plain thread of its own, so the number of threads
/// is exactly the number asked for, whatever else the process runs.
struct NativeThread {
    private let id: pthread_t

    /// Starts `body` on a new thread with a `stackSize`-byte stack; `join` waits for it.
    init(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var id = pthread_t()
        let status = pthread_create(&id, &attributes, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        // Only resource exhaustion fails here; a run cannot go on without its threads.
        precondition(status == 0, "cannot start a thread: \(String(cString: strerror(status)))")
        self.id = id
    }

    func join() { pthread_join(id, nil) }

    /// Lets the thread's resources go when it ends, for a thread nobody joins.
    func detach() { pthread_detach(id) }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
