"""One table of exit statuses (statuses.py), held to `rankings`'s own (JobError.swift) and to
docs/exit-status.md; and the files the night writes beside others' (files.py)."""
import os
import re
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import files, statuses  # noqa: E402


class Statuses(harness.Case):
    def test_rankings_own_statuses_mean_the_same_here(self):
        with open(os.path.join(harness.ROOT, "Sources", "RankingsKit", "Job", "JobError.swift")) as f:
            swift = f.read()
        used = {int(n) for n in re.findall(r"case [^:]+: (\d+)", swift)}
        self.expect("statuses rankings exits with that the table lacks", sorted(used - set(statuses.NAMES)), [])
        for name, status in (("usage", 64), ("data", 65), ("no input", 66), ("cannot create", 73), ("I/O error", 74)):
            self.expect(f"{status}", statuses.NAMES[status], name)

    def test_the_night_documents_every_status_it_exits_with(self):
        with open(os.path.join(harness.ROOT, "docs", "exit-status.md"), encoding="utf-8") as f:
            page = f.read()
        section = page.split("\n## rankings-night\n", 1)[1].split("\n## ", 1)[0]
        documented = {int(n) for n in re.findall(r"^\| (\d+)", section, re.M)}
        own = set(statuses.NAMES) - {statuses.STOPPED}
        self.expect("the night's statuses missing from docs/exit-status.md", sorted(own - documented), [])
        self.expect("documented statuses the table does not know", sorted(documented - set(statuses.NAMES)), [])

    def test_retries_only_where_another_try_can_change_the_outcome(self):
        self.expect("final", sorted(statuses.FINAL), [64, 65, 70, 78])


class Files(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-night-files.")
        self.victim = os.path.join(self.work, "victim")
        with open(self.victim, "w") as f:
            f.write("someone else's\n")

    def test_a_file_replaced_atomically_replaces_a_planted_link_not_its_target(self):
        path = os.path.join(self.work, "rankings-fetch.prom")
        os.symlink(self.victim, path)
        old = os.umask(0o077)
        try:
            files.write_atomically(path, b"new\n")
        finally:
            os.umask(old)
        with open(self.victim) as f:
            self.expect("the link's target", f.read(), "someone else's\n")
        self.assertFalse(os.path.islink(path))
        self.expect("mode, whatever the umask", stat.S_IMODE(os.stat(path).st_mode), 0o644)
        self.expect("no staging file left", sorted(os.listdir(self.work)), ["rankings-fetch.prom", "victim"])

    def test_a_lock_is_never_opened_through_a_link(self):
        for opener in (files.lock,):
            path = os.path.join(self.work, f"planted-{opener.__name__}")
            os.symlink(self.victim, path)
            with self.assertRaises(OSError):
                opener(path)
        with open(self.victim) as f:
            self.expect("untouched", f.read(), "someone else's\n")

    def test_a_lock_made_under_a_strict_umask_stays_open_to_others(self):
        path = os.path.join(self.work, ".rankings.lock")
        old = os.umask(0o077)
        try:
            fd = files.lock(path)
        finally:
            os.umask(old)
        self.expect("mode", stat.S_IMODE(os.stat(path).st_mode), 0o644)
        self.expect("a second lock while held", files.lock(path), None)
        os.close(fd)
        os.close(files.lock(path))


if __name__ == "__main__":
    harness.main()
