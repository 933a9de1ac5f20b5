"""The one reader of the settings: the configuration file's syntax, the twelve settings' types and
ranges, the environment, 0.4's settings (carried over with one WARNING, or 78 naming what to write),
and docs/configuration.md's table against the code's."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import settings  # noqa: E402
from rankings_night.statuses import Failure  # noqa: E402

REQUIRED = "RANKINGS_EXPORTS=/srv/e\n"
PROJECT = "RANKINGS_FIRESTORE_PROJECT=my-jokes-app\n"
# firestore.md's minimal block of 0.4, and the shipped rankings.conf's lines of 0.4.
MINIMAL_04 = ('RANKINGS_FETCH="/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore"\n'
              "RANKINGS_PUBLISH=/usr/libexec/rankings-publish-firestore\n" + PROJECT)
SHIPPED_04 = ('RANKINGS_EXPORTS=/srv/rankings/exports\nRANKINGS_OUTPUT=/var/lib/rankings/all_time.json\n'
              'RANKINGS_FLAGS="--max-drop 1"\nRANKINGS_METRICS=\nRANKINGS_FETCH=\nRANKINGS_PUBLISH=\n')


def read(text):
    with tempfile.NamedTemporaryFile("wb", suffix=".conf") as conf:
        conf.write(text.encode("latin-1") if isinstance(text, str) else text)
        conf.flush()
        return settings.read_file(conf.name)


class File(harness.Case):
    def refused(self, text, line, said):
        with self.assertRaises(Failure) as raised:
            read(text)
        self.expect("status", raised.exception.status, 78)
        self.expect_in("the line", f".conf:{line}: ", str(raised.exception))
        self.expect_in("the reason", said, str(raised.exception))

    def test_every_accepted_form_reads_to_its_value(self):
        s = read("# A comment\n   # indented\n\t\nRANKINGS_EXPORTS=\"/srv/config check/exports\"\n"
                 "RANKINGS_STATE_DIRECTORY=/srv/state/   \nRANKINGS_MAX_DROP=0.5\nRANKINGS_MAX_REFUSED=2\n"
                 "RANKINGS_METRICS=\nRANKINGS_FIRESTORE_TOKEN_COMMAND=\"gcloud auth print-access-token "
                 "--impersonate-service-account=a@b.iam.gserviceaccount.com\"\nRANKINGS_MONTHLY=yes\t")
        self.expect("exports", s.exports, "/srv/config check/exports")
        self.expect("state, normalised", s.state_directory, "/srv/state")
        self.expect("guard, refused share", (s.max_drop, s.max_refused), ("0.5", "2"))
        self.expect("metrics", s.metrics, None)
        self.expect("token command", s.firestore_token_command,
                    "gcloud auth print-access-token --impersonate-service-account=a@b.iam.gserviceaccount.com")
        self.expect("monthly", (s.monthly, s.roles), (True, ("all_time", "monthly")))
        self.expect("defaults", (s.retries, s.firestore_database, s.log_format, s.notes), (3, "(default)", "plain", None))

    def test_the_last_line_needs_no_newline(self):
        self.expect("exports", read("RANKINGS_EXPORTS=/srv/e").exports, "/srv/e")

    def test_there_are_at_most_twelve_settings(self):
        self.assertLessEqual(len(settings.TABLE), 12)

    def test_lines_outside_the_syntax_are_refused_with_their_line(self):
        cases = [
            ("RANKINGS_FIRESTORE_TOKEN_COMMAND=gcloud auth", "a value with spaces must be in double quotes"),
            ("RANKINGS_FIRESTORE_PROJECT=jokes-app-prod # production", "a comment after a value"),
            ('RANKINGS_FIRESTORE_TOKEN_COMMAND="gcloud" # token', "a comment after a value"),
            ('RANKINGS_FIRESTORE_TOKEN_COMMAND="gcloud', 'must end with " at the end of the line'),
            ("RANKINGS_FIRESTORE_TOKEN_COMMAND=$HOME/x", '"$" is not allowed in a value'),
            ("RANKINGS_FIRESTORE_TOKEN_COMMAND=a;b", '";" is not allowed'),
            ("RANKINGS_FIRESTORE_TOKEN_COMMAND='x'", "\"'\" is not allowed"),
            ('RANKINGS_FIRESTORE_TOKEN_COMMAND="a\tb"', "byte 0x09 is not allowed"),
            ("RANKINGS_STATE_DIRECTORY=/caf\xe9", "byte 0xE9 is not allowed"),
            ("export RANKINGS_MONTHLY=yes", "not a KEY=VALUE line"),
            ("RANKINGS_MONTHLY = yes", "not a KEY=VALUE line"),
            ("  RANKINGS_MONTHLY=yes", "not a KEY=VALUE line"),
            ("; a comment", "not a KEY=VALUE line"),
            ("RANKINGS_MAX_DROPS=1", "unknown setting RANKINGS_MAX_DROPS (did you mean RANKINGS_MAX_DROP?)"),
            ("RANKINGS_FIRESTORE_PROJCT=x", "did you mean RANKINGS_FIRESTORE_PROJECT?"),
            ("RANKINGS_INCLUDE=/etc/rankings.conf", "unknown setting RANKINGS_INCLUDE"),
            ("RANKINGS_MONTHLY=yes\r", "a carriage return"),
            ("RANKINGS_MONTHLY=y\0s", "byte 0x00"),
            ("RANKINGS_FIRESTORE_TOKEN_COMMAND=" + "x" * 131060, "longer than a program's environment holds"),
        ]
        for line, said in cases:
            with self.subTest(line=line[:40]):
                self.refused("# first\n" + line + "\n" + REQUIRED, 2, said)

    def test_values_outside_their_type_or_range_are_refused(self):
        cases = [
            ("RANKINGS_MAX_DROP", "101", "a percentage from 0 to 100"),
            ("RANKINGS_MAX_DROP", "1.1234567", "up to six decimals"),
            ("RANKINGS_MAX_REFUSED", "-1", "a percentage"),
            ("RANKINGS_MAX_REFUSED", "\u0667", "byte"),
            ("RANKINGS_RETRIES", "11", "from 0 to 10"),
            ("RANKINGS_RETRIES", "1e3", "a whole number"),
            ("RANKINGS_MONTHLY", "true", "must be yes or no"),
            ("RANKINGS_LOG_FORMAT", "text", "must be plain or json"),
            ("RANKINGS_FIRESTORE_PROJECT", "My_Project", "project id"),
            ("RANKINGS_FIRESTORE_DATABASE", "Default", "a database id"),
            ("FIRESTORE_EMULATOR_HOST", "localhost", "HOST:PORT"),
            ("RANKINGS_STATE_DIRECTORY", "var/lib/rankings", "an absolute path"),
            ("RANKINGS_METRICS", "rankings.prom", "an absolute path"),
            ("RANKINGS_EXPORTS", "./exports", "an absolute path"),
        ]
        for name, value, said in cases:
            with self.subTest(name=name, value=value):
                with self.assertRaises(Failure) as raised:
                    read((REQUIRED + f"{name}={value}\n").encode("utf-8"))
                self.expect("status", raised.exception.status, 78)
                self.expect_in("the reason", said, str(raised.exception))
                if "byte" not in said:
                    self.expect_in("where", ".conf:2: ", str(raised.exception))

    def test_a_byte_order_mark_is_not_part_of_the_first_name(self):
        self.expect("the first setting", read(b"\xef\xbb\xbfRANKINGS_EXPORTS=/srv/e\n").exports, "/srv/e")

    def test_a_missing_file_and_a_night_with_nothing_to_read_are_78(self):
        with self.assertRaises(Failure) as raised:
            settings.read_file("/nonexistent/rankings.conf")
        self.expect("status", raised.exception.status, 78)
        with self.assertRaises(Failure) as raised:
            read("RANKINGS_MONTHLY=yes\n")
        self.expect_in("message", "RANKINGS_EXPORTS is not set", str(raised.exception))

    def test_exports_beside_a_project_are_refused(self):
        self.refused(PROJECT + "RANKINGS_EXPORTS=/srv/e\n", 2, "the night reads what it fetched, never another folder")


class Compatibility(harness.Case):
    """0.4's files: those whose meaning is unchanged run with one WARNING naming each line and what
    to write; those that chose a removed mode are 78 before anything runs, naming what to do."""

    def test_the_shipped_04_file_reads_as_before_with_one_warning(self):
        s = read(SHIPPED_04)
        self.expect("what it meant", (s.exports, s.state_directory, s.max_drop, s.firestore_project),
                    ("/srv/rankings/exports", "/var/lib/rankings", "1", None))
        self.expect_in("one warning", "holds settings of 0.4, read as before", s.notes)
        for said in ("line 2 RANKINGS_OUTPUT=/var/lib/rankings/all_time.json: delete it",
                     'line 3 RANKINGS_FLAGS="--max-drop 1": delete it',
                     "line 5 RANKINGS_FETCH=: delete it", "line 6 RANKINGS_PUBLISH=: delete it"):
            self.expect_in("named", said, s.notes)

    def test_the_minimal_firestore_block_of_04_reads_as_before(self):
        for extra in ("", "RANKINGS_EXPORTS=/var/lib/rankings/firestore/current\n", 'RANKINGS_FLAGS="--max-drop 5"\n'):
            with self.subTest(extra=extra):
                s = read(MINIMAL_04 + extra)
                self.expect("no exports read", s.exports, None)
                self.expect_in("the fetch", "RANKINGS_FETCH=\"/usr/libexec/rankings-fetch-firestore "
                                            "/var/lib/rankings/firestore\": delete it", s.notes)
                self.expect_in("the publish", "RANKINGS_PUBLISH=/usr/libexec/rankings-publish-firestore: delete it",
                               s.notes)
        s = read('RANKINGS_FLAGS="--max-drop 5"\nRANKINGS_OUTPUT=/srv/state/all_time.json\n'
                 'RANKINGS_FETCH="/usr/libexec/rankings-fetch-firestore /srv/state/firestore"\n'
                 "RANKINGS_PUBLISH=/usr/libexec/rankings-publish-firestore\n" + PROJECT)
        self.expect("carried over", (s.state_directory, s.max_drop), ("/srv/state", "5"))
        self.expect_in("what to write", "write RANKINGS_MAX_DROP=5 instead", s.notes)
        self.expect_in("what to write", "write RANKINGS_STATE_DIRECTORY=/srv/state instead", s.notes)

    def test_settings_now_derived_or_constant_are_named_for_deletion(self):
        s = read(REQUIRED + "RANKINGS_RETRY_PAUSE_SECONDS=0\nRANKINGS_LOCK_FILE=/x\nRANKINGS_FIRESTORE_STREAMS=16\n"
                 "RANKINGS_FIRESTORE_COLLECTION=weekly_rankings\nRANKINGS_BOARD_PROOF=yes\n"
                 "RANKINGS_FIRESTORE_FETCH=rest\n")
        for name in ("RANKINGS_RETRY_PAUSE_SECONDS=0", "RANKINGS_LOCK_FILE=/x", "RANKINGS_FIRESTORE_STREAMS=16",
                     "RANKINGS_FIRESTORE_COLLECTION=weekly_rankings", "RANKINGS_BOARD_PROOF=yes",
                     "RANKINGS_FIRESTORE_FETCH=rest"):
            self.expect_in("named", f"{name}: delete it", s.notes)

    def test_removed_modes_are_78_naming_what_to_do(self):
        cases = [
            ("RANKINGS_FIRESTORE_SINCE=-30d", MINIMAL_04, "RANKINGS_MONTHLY=yes publishes the 30-day board"),
            ('RANKINGS_FLAGS="--max-drop 1 --since -30d"', MINIMAL_04, "--since changes what a board means"),
            ('RANKINGS_FLAGS="--dedupe device"', MINIMAL_04, "--dedupe changes what a board means"),
            ('RANKINGS_FLAGS="--computed-at 2025-01-01T00:00:00Z"', MINIMAL_04, "--computed-at changes what"),
            ('RANKINGS_FLAGS="--max-invalid 100"', MINIMAL_04, "write RANKINGS_MAX_REFUSED instead"),
            ('RANKINGS_FLAGS="--threads 2"', MINIMAL_04, "--threads is not the night's"),
            ("RANKINGS_FIRESTORE_COLLECTION=rating_events", MINIMAL_04, "published to weekly_rankings"),
            ("RANKINGS_FIRESTORE_FETCH=export", MINIMAL_04, "the export method is gone"),
            ("RANKINGS_FIRESTORE_BUCKET=gs://b", MINIMAL_04, "the export method is gone"),
            ("RANKINGS_BOARD_PROOF=required", MINIMAL_04, "every board is proved now"),
            ("RANKINGS_BOARD_PROOF=no", MINIMAL_04, "every board is proved now"),
            ("RANKINGS_FIRESTORE_ENDPOINT=https://x/v1", MINIMAL_04, "firestore.googleapis.com"),
            ("RANKINGS_OUTPUT=/var/lib/rankings/board.json", MINIMAL_04,
             "write RANKINGS_STATE_DIRECTORY=/var/lib/rankings instead, and read the board as "
             "/var/lib/rankings/all_time.json"),
            ("RANKINGS_MONTHLY_OUTPUT=/var/lib/rankings/2026.json", MINIMAL_04, "monthly.json in the state directory"),
            ("RANKINGS_PUBLISH=/usr/local/bin/copy-to-web", REQUIRED, "publish commands are gone"),
            ("RANKINGS_FETCH=/usr/local/bin/my-export", REQUIRED, "fetch commands are gone"),
            ('RANKINGS_FETCH="/usr/libexec/rankings-fetch-firestore /srv/nights"', PROJECT
             + "RANKINGS_PUBLISH=/usr/libexec/rankings-publish-firestore\n",
             "move them there (as their owner: mv /srv/nights /var/lib/rankings/firestore)"),
            ("RANKINGS_FETCH=", PROJECT + REQUIRED + "RANKINGS_PUBLISH=/usr/libexec/rankings-publish-firestore\n",
             "0.4 did not fetch"),
            ("RANKINGS_PUBLISH=", PROJECT + 'RANKINGS_FETCH="/usr/libexec/rankings-fetch-firestore '
             '/var/lib/rankings/firestore"\n', "0.4 did not publish"),
        ]
        for line, rest, said in cases:
            with self.subTest(line=line):
                with self.assertRaises(Failure) as raised:
                    read(line + "\n" + rest)
                self.expect("status", raised.exception.status, 78)
                self.expect_in("where", f".conf:1: {line.split('=')[0]}", str(raised.exception))
                self.expect_in("what to do", said, str(raised.exception))
                self.expect_in("nothing ran", "nothing was run", str(raised.exception))

    def test_a_04_fetch_without_a_publish_is_refused(self):
        with self.assertRaises(Failure) as raised:
            read('RANKINGS_FETCH="/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore"\n' + PROJECT)
        self.expect_in("why", "without RANKINGS_PUBLISH, 0.4 did not publish", str(raised.exception))

    def test_the_environment_of_a_04_image_reads_as_before(self):
        environ = {"RANKINGS_OUTPUT": "/var/lib/rankings/all_time.json",
                   "RANKINGS_FETCH": "/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore",
                   "RANKINGS_EXPORTS": "/var/lib/rankings/firestore/current",
                   "RANKINGS_PUBLISH": "/usr/libexec/rankings-publish-firestore", "RANKINGS_FLAGS": "--max-drop 1",
                   "RANKINGS_FIRESTORE_PROJECT": "p1"}
        s = settings.from_environment(environ)
        self.expect("read", (s.firestore_project, s.exports, s.state_directory), ("p1", None, "/var/lib/rankings"))
        self.expect_in("named without a line", "RANKINGS_FLAGS=\"--max-drop 1\": delete it", s.notes)


class Environment(harness.Case):
    def test_unknown_names_and_bad_values_are_refused(self):
        with self.assertRaises(Failure) as raised:
            settings.from_environment({"RANKINGS_FIRESTORE_PROJCT": "x"})
        self.expect_in("message", "environment: unknown setting RANKINGS_FIRESTORE_PROJCT", str(raised.exception))
        with self.assertRaises(Failure) as raised:
            settings.from_environment({"RANKINGS_RETRIES": "three", "RANKINGS_EXPORTS": "/e"})
        self.expect("status", raised.exception.status, 78)

    def test_kubernetes_service_links_are_not_settings(self):
        links = {"RANKINGS_SERVICE_HOST": "10.0.0.1", "RANKINGS_PORT": "tcp://10.0.0.1:80",
                 "RANKINGS_DB_SERVICE_HOST": "10.0.0.2", "RANKINGS_DB_SERVICE_PORT": "5432",
                 "RANKINGS_DB_PORT_5432_TCP_ADDR": "10.0.0.2", "RANKINGS_API_V2_PORT": "tcp://10.0.0.3:443"}
        s = settings.from_environment(dict(links, RANKINGS_FIRESTORE_PROJECT="p1"))
        self.expect("given", s.given, {"RANKINGS_FIRESTORE_PROJECT": "p1"})

    def test_other_variables_and_the_binarys_own_pass(self):
        s = settings.from_environment({"PATH": "/bin", "RANKINGS_CPU": "portable", "RANKINGS_FIRESTORE_PROJECT": "p1"})
        self.expect("given", s.given, {"RANKINGS_FIRESTORE_PROJECT": "p1"})


class Shown(harness.Case):
    def settings(self, *argv, env):
        return harness.run([os.path.join(harness.NIGHT, "rankings-night"), "settings", *argv],
                           env=dict(env, PATH=os.environ["PATH"]))

    def test_settings_on_a_platform_show_what_the_night_uses(self):
        done = self.settings("--environment", env={"CLOUD_RUN_JOB": "rankings", "RANKINGS_FIRESTORE_PROJECT": "p1"})
        self.expect_exit(done, 0)
        self.expect_in("retries", "RANKINGS_RETRIES=0    # default on a container platform\n", done.stdout)
        self.expect_in("log format", "RANKINGS_LOG_FORMAT=json    # default on a container platform\n", done.stdout)
        self.expect("twelve lines at most", len(done.stdout.splitlines()) <= 12, True)

    def test_config_twice_is_64(self):
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
            conf.write(REQUIRED)
            conf.flush()
            done = self.settings("--config", conf.name, "--config", conf.name, env={})
            self.expect_exit(done, 64, "--config FILE or --environment, once")
            self.expect_exit(self.settings("--config", conf.name, env={}), 0)


class Documented(harness.Case):
    def test_configuration_md_lists_exactly_the_table(self):
        with open(os.path.join(harness.ROOT, "docs", "configuration.md"), encoding="utf-8") as page:
            text = page.read()
        table = text.split("\n## Settings\n", 1)[1].split("\n#", 1)[0]
        documented = set(re.findall(r"^\| `([A-Z_]+)` \|", table, re.M))
        self.expect("documented but not read", sorted(documented - set(settings.TABLE)), [])
        self.expect("read but not documented", sorted(set(settings.TABLE) - documented), [])


if __name__ == "__main__":
    harness.main()
