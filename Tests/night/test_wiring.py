"""What the settings make of a night (wiring.py), decided before anything runs: the fetch in this
process or a program, the snapshot the job reads, each board's file and document, and the
settings that contradict each other, refused with 78 and what to change."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import settings, wiring  # noqa: E402
from rankings_night.statuses import Failure  # noqa: E402

FETCH = "/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore"
PUBLISH = "/usr/libexec/rankings-publish-firestore"


def wire(**given):
    base = {"RANKINGS_OUTPUT": "/var/lib/rankings/all_time.json"}
    base.update(given)
    return wiring.wire(settings.Settings(base, {k: "environment" for k in base}))


class Wiring(harness.Case):
    def refused(self, said, **given):
        with self.assertRaises(Failure) as raised:
            wire(**given)
        self.expect("status", raised.exception.status, 78)
        self.expect_in("the reason", said, str(raised.exception))

    def test_the_shipped_fetch_runs_here_and_gives_the_snapshot(self):
        w = wire(RANKINGS_FETCH=FETCH, RANKINGS_FIRESTORE_PROJECT="p")
        self.expect("fetch here", (w.fetch_directory, w.fetch_command), ("/var/lib/rankings/firestore", None))
        self.expect("exports derived", w.exports, "/var/lib/rankings/firestore/current")
        w = wire(RANKINGS_FETCH=FETCH, RANKINGS_FIRESTORE_PROJECT="p",
                 RANKINGS_EXPORTS="/var/lib/rankings/firestore/./current")
        self.expect("the same folder spelt otherwise (0.4's configurations)", w.exports,
                    "/var/lib/rankings/firestore/current")

    def test_exports_that_are_not_the_fetchs_current_are_refused(self):
        # 0.4 fetched 800 votes and built the board from the 400 of another folder, exit 0.
        self.refused("set RANKINGS_EXPORTS=/var/lib/rankings/firestore/current, or leave it unset",
                     RANKINGS_FETCH=FETCH, RANKINGS_FIRESTORE_PROJECT="p", RANKINGS_EXPORTS="/srv/rankings/exports")

    def test_another_fetch_program_is_a_child_and_needs_exports(self):
        w = wire(RANKINGS_FETCH="/usr/local/bin/my-export /srv/e", RANKINGS_EXPORTS="/srv/e")
        self.expect("command", (w.fetch_directory, w.fetch_command), (None, ("/usr/local/bin/my-export", "/srv/e")))
        self.refused("RANKINGS_EXPORTS is not set", RANKINGS_FETCH="/usr/local/bin/my-export /srv/e")
        self.refused("takes one, the folder", RANKINGS_FETCH=FETCH + " extra", RANKINGS_FIRESTORE_PROJECT="p")

    def test_a_boards_document_is_its_role_not_its_file_name(self):
        # 0.4 published RANKINGS_OUTPUT=.../leaderboard.json as weekly_rankings/leaderboard, and a
        # monthly board named all_time.json as weekly_rankings/all_time.
        w = wire(RANKINGS_EXPORTS="/srv/e", RANKINGS_OUTPUT="/var/lib/rankings/leaderboard.json",
                 RANKINGS_MONTHLY="yes", RANKINGS_MONTHLY_OUTPUT="/var/lib/rankings/month/all_time.json",
                 RANKINGS_PUBLISH=PUBLISH, RANKINGS_FIRESTORE_PROJECT="p")
        # The 30-day board is the New York week's document older app versions read.
        self.expect("documents", [(b.role, b.output, wiring.document_of(b, "2026-11-30T04:59:59.999Z"))
                                  for b in w.boards],
                    [("all_time", "/var/lib/rankings/leaderboard.json", "all_time"),
                     ("monthly", "/var/lib/rankings/month/all_time.json", "2026-W48")])
        self.expect("at the week's turn, New York's Monday", wiring.document_of(w.boards[1], "2026-11-30T05:00:00Z"),
                    "2026-W49")
        self.expect("the ISO year's 53rd week", wiring.document_of(w.boards[1], "2027-01-01T04:00:00Z"), "2026-W53")
        self.expect("publish here", (w.publish_firestore, w.publish_command), (True, None))

    def test_two_boards_in_one_file_are_refused(self):
        self.refused("is RANKINGS_OUTPUT's file", RANKINGS_EXPORTS="/srv/e", RANKINGS_MONTHLY="yes",
                     RANKINGS_MONTHLY_OUTPUT="/var/lib/rankings/../rankings/all_time.json")

    def test_firestore_steps_need_the_project_before_anything_runs(self):
        self.refused("RANKINGS_FIRESTORE_PROJECT is not set", RANKINGS_FETCH=FETCH)
        self.refused("the Firestore publish needs it", RANKINGS_EXPORTS="/srv/e", RANKINGS_PUBLISH=PUBLISH)
        self.refused("it takes none", RANKINGS_EXPORTS="/srv/e", RANKINGS_PUBLISH=PUBLISH + " x",
                     RANKINGS_FIRESTORE_PROJECT="p")

    def test_another_publish_program_gets_each_boards_path(self):
        w = wire(RANKINGS_EXPORTS="/srv/e", RANKINGS_PUBLISH="/usr/local/bin/push --to x")
        self.expect("command", (w.publish_firestore, w.publish_command), (False, ("/usr/local/bin/push", "--to", "x")))


if __name__ == "__main__":
    harness.main()
