"""The night's program as an operator meets it, without Firestore: `--help` names only what the
package installs; a night's record that cannot be written names its file."""
import errno
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import record  # noqa: E402

PROGRAMS = ["rankings-night"]


def headings():
    """Every heading of the pages rankings(1) is made of (jobs/manpage.py's PAGES)."""
    sys.path.insert(0, os.path.join(harness.ROOT, "jobs"))
    import manpage
    found = set()
    for page, _ in manpage.PAGES:
        path = os.path.join(harness.ROOT, "docs", page)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as text:
                found |= {line.lstrip("#").strip() for line in text if line.startswith("#")}
    return found


class Help(harness.Case):
    def test_every_programs_help_names_only_what_is_installed(self):
        titles = headings()
        for program in PROGRAMS:
            with self.subTest(program=program):
                done = harness.run([os.path.join(harness.NIGHT, program), "--help"])
                self.expect_exit(done, 0)
                text = " ".join(done.stdout.split())
                self.expect_in("the man page", "rankings(1)", text)
                for title in re.findall(r'"([^"]+)" in rankings\(1\)|rankings\(1\): "([^"]+)"', text):
                    title = next(t for t in title if t)
                    self.assertIn(title, titles, f"{program} names the section {title!r}, which rankings(1) lacks")
                for page in re.findall(r"/usr/share/doc/rankings/([\w.-]+)\.md(?:\.gz)?", text):
                    self.assertTrue(os.path.exists(os.path.join(harness.ROOT, "docs", page + ".md")),
                                    f"{program} names {page}.md, which is not installed")


class Failing(harness.Case):
    def test_a_record_that_cannot_be_written_names_its_file(self):
        folder = tempfile.mkdtemp(prefix="rankings-night-record.")
        real = os.fsync

        def full(_fd):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync = full
        try:
            with self.assertRaises(OSError) as raised:
                record.write(folder, {"mode": "full"})
        finally:
            os.fsync = real
        self.expect("the file", raised.exception.filename, os.path.join(folder, record.RECORD))
        self.expect("why", raised.exception.strerror, os.strerror(errno.ENOSPC))


if __name__ == "__main__":
    harness.main()
