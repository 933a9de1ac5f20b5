// Linux calls that Swift's Glibc module hides behind _GNU_SOURCE: an unnamed temporary file
// (O_TMPFILE) and an atomic exchange of two names (renameat2), for AtomicFile.
#include <fcntl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

// O_TMPFILE, spelled as glibc's fcntl headers define it for every architecture.
static const int rankings_O_TMPFILE = __O_TMPFILE;
static const unsigned int rankings_RENAME_EXCHANGE = 1u << 1;

// Through syscall(2): glibc declares renameat2 only with _GNU_SOURCE. -1 with ENOSYS on a
// kernel before 3.15, EINVAL on a filesystem without the flag.
static inline int rankings_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                                     unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}
