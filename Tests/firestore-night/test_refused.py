"""Nights turned away before they start, each through the proxy in front of Google's emulator with
an app's board already in weekly_rankings/all_time:
  - 0.4 configurations that used a mode 0.5 removed (issue 48): a window night, flags that change
    what a board means (--since, --dedupe, --computed-at), the collection setting, the export
    method, two outputs sharing a file: 78, naming what to write instead;
  - paths the night cannot trust (issue 49): a FIFO where the metrics or a board's stats go (73 at
    once, never a hang), a relative state directory (78); and `--config` twice (64).
Each with 50 votes in rating_events: the exit status and its one ERROR line, no request at the proxy
(nothing read, nothing published), weekly_rankings/all_time byte for byte as it was, no history."""
import os
import random

import common
import harness

SAMPLE = os.path.join(harness.ROOT, "sample-data", "rating_events.ndjson")
# The app's board, as a night of 0.4 left it (what must stay untouched).
BOARD = {"week_id": "all_time", "hilarious": [{"joke_id": "J001", "count": 3}], "horrible": [],
         "total_hilarious_ratings": 3, "total_horrible_ratings": 0}


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


class Refused(harness.Case):
    def turned_away(self, name, status, argv=None, lines=None, settings=None, said=(), before=None, cwd=None):
        """A night of project `name` with the 0.4-style file `lines` (or the environment `settings`)
        exits `status` at once, its ERROR line holding each of `said`, having asked nothing."""
        p = common.Project(name)
        common.write(p.db, common.votes(random.Random(name), 50, 60).items())
        p.db.collection("weekly_rankings").document("all_time").set(BOARD)
        board = p.document()
        os.makedirs(p.state, exist_ok=True)
        if before:
            before(p)
        argv = argv(p) if callable(argv) else argv
        cwd = cwd and os.path.join(p.folder, cwd)
        if cwd:
            os.makedirs(cwd)
        with common.proxy() as proxy:
            if lines is not None:
                config = p.config([("RANKINGS_FIRESTORE_PROJECT", p.project),
                                   ("FIRESTORE_EMULATOR_HOST", proxy.address)] + [
                    (k, v.replace("{state}", p.state)) for k, v in lines])
                done = p.night(*(argv or ["run", "--config", config]), timeout=60, cwd=cwd)
            else:
                done = p.night(*(argv or ["run", "--environment"]), timeout=60, cwd=cwd,
                               settings=p.settings(proxy, **(settings or {})))
        self.expect_exit(done, status)
        errors = common.errors(done)
        self.expect("ERROR lines", len(errors), 1)
        for words in said:
            self.expect_in("the refusal", words.replace("{state}", p.state), errors[0])
        self.expect("requests at the proxy", [f"{c.method} {c.path}" for c in proxy.calls], [])
        self.expect("weekly_rankings/all_time", p.document(), board)
        self.expect("rating_events/all_time (the votes' collection)", common.rest(p.project, "rating_events/all_time"),
                    None)
        self.expect("history written", os.path.exists(os.path.join(p.state, ".rankings-nights.json")), False)
        return p, done

    # The 0.4 night's own lines, as firestore.md's minimal configuration wrote them.
    HOOKS = [("RANKINGS_OUTPUT", "{state}/all_time.json"),
             ("RANKINGS_FETCH", "/usr/libexec/rankings-fetch-firestore {state}/firestore"),
             ("RANKINGS_PUBLISH", "/usr/libexec/rankings-publish-firestore"), ("RANKINGS_RETRIES", "0")]

    def test_a_window_night_is_78_naming_the_30_day_board(self):
        # 0.4's "night of its own": a window fetch and the job's --since, published as all_time.
        self.turned_away("window", 78, lines=self.HOOKS + [("RANKINGS_FIRESTORE_SINCE", "-30d"),
                                                          ("RANKINGS_FLAGS", "--max-drop 1 --since -30d")],
                         said=["RANKINGS_FIRESTORE_SINCE", "RANKINGS_MONTHLY=yes"])

    def test_since_in_the_flags_is_78_naming_the_30_day_board(self):
        self.turned_away("since", 78, lines=self.HOOKS + [("RANKINGS_FLAGS", "--max-drop 1 --since -30d")],
                         said=["--since", "RANKINGS_MONTHLY=yes", "rankings aggregate"])

    def test_dedupe_in_the_flags_is_78_naming_rankings_aggregate(self):
        self.turned_away("dedupe", 78, lines=self.HOOKS + [("RANKINGS_FLAGS", "--dedupe device")],
                         said=["--dedupe", "rankings aggregate"])

    def test_computed_at_in_the_flags_is_78_naming_rankings_aggregate(self):
        self.turned_away("computed", 78, lines=self.HOOKS + [("RANKINGS_FLAGS", "--computed-at 2025-01-01T00:00:00Z")],
                         said=["--computed-at", "rankings aggregate"])

    def test_the_collection_setting_is_78_naming_weekly_rankings(self):
        self.turned_away("collection", 78, lines=self.HOOKS + [("RANKINGS_FIRESTORE_COLLECTION", "rating_events")],
                         said=["RANKINGS_FIRESTORE_COLLECTION=rating_events", "weekly_rankings", "delete the line"])

    def test_the_export_method_is_78_before_any_export(self):
        self.turned_away("export", 78, lines=self.HOOKS + [("RANKINGS_FIRESTORE_FETCH", "export"),
                                                          ("RANKINGS_FIRESTORE_BUCKET", "gs://demo-exports/rankings"),
                                                          ("RANKINGS_BOARD_PROOF", "required")],
                         said=["RANKINGS_FIRESTORE_FETCH=export", "export method", "delete the line"])

    def test_two_boards_sharing_one_stats_file_is_78_naming_monthly_json(self):
        # 0.4 kept a board's --stats beside it, named by its file's stem: all_time.json and all_time
        # both wrote .all_time.stats.ndjson, and the proof read the other board's.
        self.turned_away("shared", 78, lines=self.HOOKS + [("RANKINGS_MONTHLY", "yes"),
                                                          ("RANKINGS_MONTHLY_OUTPUT", "{state}/all_time")],
                         said=["RANKINGS_MONTHLY_OUTPUT", "RANKINGS_STATE_DIRECTORY={state}", "{state}/monthly.json"])

    def test_a_stats_file_of_ones_own_in_the_flags_is_78(self):
        flags = "--max-drop 1 --stats {state}/stats.ndjson"
        self.turned_away("stats", 78, lines=self.HOOKS + [("RANKINGS_MONTHLY", "yes"), ("RANKINGS_FLAGS", flags)],
                         said=["RANKINGS_FLAGS", "--stats", "delete it"])

    def test_a_fifo_at_the_metrics_path_is_73_at_once(self):
        def fifo(p):
            os.mkfifo(p.metrics)
        _, done = self.turned_away("fifo-metrics", 73, before=fifo, said=["{state}/rankings.prom", "FIFO"])
        self.assertLess(done.seconds, 30, "not at once")

    def test_a_fifo_at_the_all_time_boards_stats_is_73_at_once(self):
        def fifo(p):
            os.mkfifo(os.path.join(p.state, ".all_time.stats.ndjson"))
        _, done = self.turned_away("fifo-stats", 73, before=fifo, said=["{state}/.all_time.stats.ndjson", "FIFO"])
        self.assertLess(done.seconds, 30, "not at once")

    def test_a_relative_state_directory_is_78(self):
        p, _ = self.turned_away("relative", 78, settings={"RANKINGS_STATE_DIRECTORY": "state"}, cwd="elsewhere",
                                said=["RANKINGS_STATE_DIRECTORY=state", "absolute"])
        self.expect("what the night left in its working directory", os.listdir(os.path.join(p.folder, "elsewhere")), [])

    def test_config_given_twice_is_64(self):
        def two(p):
            for name in ("a.conf", "b.conf"):
                p.config([("RANKINGS_EXPORTS", SAMPLE), ("RANKINGS_STATE_DIRECTORY", p.state),
                          ("RANKINGS_RETRIES", "0")], name)
        self.turned_away("twice", 64, before=two, argv=lambda p: ["run", "--config", os.path.join(p.folder, "a.conf"),
                                                                  "--config", os.path.join(p.folder, "b.conf")],
                         said=["--config"])


if __name__ == "__main__":
    harness.main()
