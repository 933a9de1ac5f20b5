import Glibc

/// A mutex with a condition variable: what two threads use to hand chunks back and forth,
/// each waiting until the other has changed the state they share.
///
/// Synchronization's `Mutex` has no way to wait on a condition, hence this small pthreads pair.
final class Condition: @unchecked Sendable {
    // pthread objects must not move, so they live in their own allocations.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the lock while waiting; holds it again on return (spurious wake-ups included).
    func wait() { pthread_cond_wait(condition, mutex) }

    func broadcast() { pthread_cond_broadcast(condition) }
}
