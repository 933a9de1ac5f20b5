import Glibc

/// Touch before starting a child process the test writes to. A child that exits before reading
/// all of its standard input (a usage error, a missing file) turns the test's next write into
/// SIGPIPE, whose default action kills the whole test run; ignored, the write fails with EPIPE
/// and the test sees the child's real status.
let ignoringBrokenPipes: Void = {
    signal(SIGPIPE, SIG_IGN)
}()
