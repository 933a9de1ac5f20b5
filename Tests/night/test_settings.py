"""The one reader of the settings: the configuration file's syntax, every value's type and range,
the environment, and docs/configuration.md's table against the code's."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import settings  # noqa: E402
from rankings_night.statuses import Failure  # noqa: E402

REQUIRED = "RANKINGS_EXPORTS=/srv/e\nRANKINGS_OUTPUT=/var/lib/rankings/all_time.json\n"


def read(text):
    with tempfile.NamedTemporaryFile("wb", suffix=".conf") as conf:
        conf.write(text.encode("latin-1") if isinstance(text, str) else text)
        conf.flush()
        return settings.read_file(conf.name), conf.name


class File(harness.Case):
    def refused(self, text, line, said):
        with self.assertRaises(Failure) as raised:
            read(text)
        self.expect("status", raised.exception.status, 78)
        message = str(raised.exception)
        self.expect_in("the line", f".conf:{line}: ", message)
        self.expect_in("the reason", said, message)

    def test_every_accepted_form_reads_to_its_value(self):
        s, _ = read("# A comment\n   # indented\n\t\nRANKINGS_EXPORTS=\"/srv/config check/exports\"\n"
                    "RANKINGS_OUTPUT=\"/srv/config check/all time.json\"   \nRANKINGS_FLAGS=--quiet\n"
                    "RANKINGS_FLAGS=\"--max-invalid  5   --time-zone=Etc/GMT+5 --label=a,b@c%d_e.f/g:h\"\n"
                    "RANKINGS_METRICS=\nRANKINGS_PUBLISH=\"/usr/local/bin/p  --project jokes-app --database (default)\"\n"
                    "RANKINGS_RETRY_PAUSE_SECONDS=0\nRANKINGS_BIN=/usr/local/bin/x\t")
        self.expect("exports", s.exports, "/srv/config check/exports")
        self.expect("output", s.output, "/srv/config check/all time.json")
        self.expect("flags (the last one given)", s.flags,
                    ["--max-invalid", "5", "--time-zone=Etc/GMT+5", "--label=a,b@c%d_e.f/g:h"])
        self.expect("metrics", s.metrics, None)
        self.expect("publish", s.publish, ["/usr/local/bin/p", "--project", "jokes-app", "--database", "(default)"])
        self.expect("pause", s.retry_pause_seconds, 0)
        self.expect("bin", s.bin, "/usr/local/bin/x")
        self.expect("defaults", (s.retries, s.firestore_keep, s.firestore_margin, s.firestore_database), (3, 7, 172800, "(default)"))

    def test_the_last_line_needs_no_newline(self):
        s, _ = read(REQUIRED + "RANKINGS_FLAGS=--quiet")
        self.expect("flags", s.flags, ["--quiet"])

    def test_lines_outside_the_syntax_are_refused_with_their_line(self):
        cases = [
            ("RANKINGS_FLAGS=--max-drop 1", "a value with spaces must be in double quotes"),
            ("RANKINGS_FIRESTORE_PROJECT=jokes-app-prod # production", "a comment after a value"),
            ('RANKINGS_FLAGS="--max-drop 1" # guard', "a comment after a value"),
            ('RANKINGS_FLAGS="--max-drop 1', 'must end with " at the end of the line'),
            ("RANKINGS_PUBLISH=$HOME/x", '"$" is not allowed in a value'),
            ("RANKINGS_PUBLISH=a;b", '";" is not allowed'),
            ("RANKINGS_FLAGS='--quiet'", "\"'\" is not allowed"),
            ('RANKINGS_FLAGS="a\tb"', "byte 0x09 is not allowed"),
            ("RANKINGS_OUTPUT=/caf\xe9", "byte 0xE9 is not allowed"),
            ("export RANKINGS_FLAGS=x", "not a KEY=VALUE line"),
            ("RANKINGS_FLAGS = x", "not a KEY=VALUE line"),
            ("  RANKINGS_FLAGS=x", "not a KEY=VALUE line"),
            ("; a comment", "not a KEY=VALUE line"),
            ("RANKINGS_FLAG=\"--max-drop 1\"", "unknown setting RANKINGS_FLAG (did you mean RANKINGS_FLAGS?)"),
            ("RANKINGS_FIRESTORE_PROJCT=x", "did you mean RANKINGS_FIRESTORE_PROJECT?"),
            ("RANKINGS_INCLUDE=/etc/rankings.conf", "RANKINGS_MONTHLY=yes"),
            ("RANKINGS_EXTRA_FLAGS=--quiet", "put the flags in RANKINGS_FLAGS"),
            ("RANKINGS_FLAGS=x\r", "a carriage return"),
            ("RANKINGS_FLAGS=x\0y", "byte 0x00"),
            ("RANKINGS_FLAGS=" + "x" * 131060, "cannot reach the steps"),
        ]
        for line, said in cases:
            with self.subTest(line=line[:40]):
                self.refused("# first\n" + line + "\n" + REQUIRED, 2, said)

    def test_values_outside_their_type_or_range_are_refused(self):
        cases = [
            ("RANKINGS_FIRESTORE_MARGIN", "999999d", "from 1h to 30d"),
            ("RANKINGS_FIRESTORE_MARGIN", "48m", "hours or days"),
            ("RANKINGS_FIRESTORE_SINCE", "-999999d", "from 1h to 3660d"),
            ("RANKINGS_FIRESTORE_SINCE", "yesterday", "RFC 3339"),
            ("RANKINGS_FIRESTORE_DEADLINE_SECONDS", "1e300", "must be a number"),
            ("RANKINGS_FIRESTORE_DEADLINE_SECONDS", "0", "from 1 to"),
            ("RANKINGS_FIRESTORE_FULL_EVERY", "7_0", "must be a number"),
            ("RANKINGS_FIRESTORE_FULL_EVERY", "\u0667", "byte"),
            ("RANKINGS_FIRESTORE_FULL_EVERY", "0", "from 1 to 366"),
            ("RANKINGS_FIRESTORE_KEEP", "-1", "must be a number"),
            ("RANKINGS_RETRIES", "11", "from 0 to 10"),
            ("RANKINGS_FIRESTORE_INCREMENTAL", "true", "must be yes or no"),
            ("RANKINGS_FIRESTORE_FETCH", "grpc", "must be rest or export"),
            ("RANKINGS_FIRESTORE_PROJECT", "My_Project", "project id"),
            ("FIRESTORE_EMULATOR_HOST", "localhost", "HOST:PORT"),
            ("RANKINGS_FIRESTORE_ENDPOINT", "ftp://x", "http(s) URL"),
        ]
        for name, value, said in cases:
            with self.subTest(name=name, value=value):
                text = REQUIRED + f"{name}={value}\n"
                with self.assertRaises(Failure) as raised:
                    read(text.encode("utf-8"))
                self.expect("status", raised.exception.status, 78)
                self.expect_in("the reason", said, str(raised.exception))
                if "byte" not in said:
                    self.expect_in("where", ".conf:3: ", str(raised.exception))

    def test_times_are_exact(self):
        s, _ = read(REQUIRED + "RANKINGS_FIRESTORE_SINCE=1970-01-01T00:00:00Z\n")
        from rankings_night.snapshot import format_time
        self.expect("the earliest time, written back", format_time(s.firestore_since), "1970-01-01T00:00:00.000000Z")
        s, _ = read(REQUIRED + "RANKINGS_FIRESTORE_SINCE=2026-11-01T00:00:00.123456789-05:00\n")
        self.expect("an offset and nanoseconds", s.firestore_since, 1793509200123456789)
        s, _ = read(REQUIRED + "RANKINGS_FIRESTORE_SINCE=-30d\n")
        self.expect("relative", s.firestore_since, -30 * 86400)

    def test_times_before_the_epoch_are_refused_not_read_as_relative(self):
        # 0001-01-01 overflowed every night (70); a moment before 1970 read as "1 s ago".
        for text in ("0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999999999Z"):
            with self.subTest(text=text):
                with self.assertRaises(Failure) as raised:
                    read(REQUIRED + f"RANKINGS_FIRESTORE_SINCE={text}\n")
                self.expect("status", raised.exception.status, 78)
                self.expect_in("the reason", "from 1970-01-01T00:00:00Z on", str(raised.exception))

    def test_a_byte_order_mark_is_not_part_of_the_first_name(self):
        s, _ = read(b"\xef\xbb\xbfRANKINGS_EXPORTS=/srv/e\nRANKINGS_OUTPUT=/var/lib/rankings/all_time.json\n")
        self.expect("the first setting", s.exports, "/srv/e")

    def test_a_missing_file_and_missing_required_settings_are_78(self):
        with self.assertRaises(Failure) as raised:
            settings.read_file("/nonexistent/rankings.conf")
        self.expect("status", raised.exception.status, 78)
        s, _ = read("RANKINGS_FLAGS=--quiet\n")
        with self.assertRaises(Failure) as raised:
            s.require("RANKINGS_EXPORTS")
        self.expect_in("message", "RANKINGS_EXPORTS is not set", str(raised.exception))


class Environment(harness.Case):
    def test_unknown_names_and_bad_values_are_refused(self):
        with self.assertRaises(Failure) as raised:
            settings.from_environment({"RANKINGS_FIRESTORE_PROJCT": "x"})
        self.expect_in("message", "environment: unknown setting RANKINGS_FIRESTORE_PROJCT", str(raised.exception))
        with self.assertRaises(Failure) as raised:
            settings.from_environment({"RANKINGS_RETRIES": "three"})
        self.expect("status", raised.exception.status, 78)

    def test_kubernetes_service_links_are_not_settings(self):
        links = {"RANKINGS_SERVICE_HOST": "10.0.0.1", "RANKINGS_PORT": "tcp://10.0.0.1:80",
                 "RANKINGS_DB_SERVICE_HOST": "10.0.0.2", "RANKINGS_DB_SERVICE_PORT": "5432",
                 "RANKINGS_DB_PORT_5432_TCP_ADDR": "10.0.0.2", "RANKINGS_API_V2_PORT": "tcp://10.0.0.3:443"}
        s = settings.from_environment(dict(links, RANKINGS_FIRESTORE_PROJECT="p1"))
        self.expect("given", s.given, {"RANKINGS_FIRESTORE_PROJECT": "p1"})

    def test_other_variables_and_the_binarys_own_pass(self):
        s = settings.from_environment({"PATH": "/bin", "RANKINGS_CPU": "portable", "RANKINGS_FIRESTORE_PROJECT": "p1"})
        self.expect("project", s.firestore_project, "p1")
        self.expect("given", s.given, {"RANKINGS_FIRESTORE_PROJECT": "p1"})


class Shown(harness.Case):
    def test_settings_on_a_platform_show_what_the_night_uses(self):
        # 0.4 showed RANKINGS_RETRIES=3 and RANKINGS_LOG_FORMAT=plain while the night used 0 and json.
        environ = {"PATH": os.environ["PATH"], "CLOUD_RUN_JOB": "rankings", "RANKINGS_OUTPUT": "/tmp/x/all_time.json"}
        done = harness.run([os.path.join(harness.NIGHT, "rankings-night"), "settings", "--environment"], env=environ)
        self.expect_exit(done, 0)
        lines = done.stdout.decode() if isinstance(done.stdout, bytes) else done.stdout
        self.expect_in("retries", "RANKINGS_RETRIES=0    # default on a container platform\n", lines)
        self.expect_in("log format", "RANKINGS_LOG_FORMAT=json    # default on a container platform\n", lines)
        self.expect_in("others as before", "RANKINGS_RETRY_PAUSE_SECONDS=300    # default\n", lines)


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
