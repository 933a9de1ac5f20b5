"""The OCI image (jobs/image.sh) run with podman as Cloud Run Jobs and Kubernetes run it: the
image itself (its user, entry point, no settings of its own, size over its base, the very binary
and night the package ships), `rankings check` on fixtures, the settings refused before anything
runs (0.4's removed modes too), the log's form and the retries' owner on and off a platform, and
whole nights against Google's Firestore emulator on the host: a first night publishes what the
votes count, a second one with the state volume reads only the new votes (with 0.4's image
settings still given: one WARNING), `podman stop` mid-night (the emulator frozen, so the night
waits on Firestore) ends the night with 143 within podman's 10 s, publishes nothing and leaves
the state as it was; a night killed outright leaves it as it was too, and the next night builds
on it; a night without the volume on a platform reads in full and keeps its snapshot compressed,
by itself; tini, PID 1, reaps an orphan. The emulator holds the sample's first 500 votes (the
proof asks two COUNTs a joke, which the emulator answers by reading every vote), and a board is
held to what `rankings aggregate` makes of the same votes at its own computed_at (Firestore's
readTime). Run by run.sh, which builds the image and passes IMAGE, BASE and BINARY.
"""
import datetime
import hashlib
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "firestore-loop"))
import harness  # noqa: E402
import emulator as emu  # noqa: E402

IMAGE, BASE, BINARY = os.environ["IMAGE"], os.environ["BASE"], os.environ["BINARY"]
# This host: runc (crun cannot use its hybrid cgroups) and limits within what root may set here.
RUN_FLAGS = shlex.split(os.environ.get("RANKINGS_PODMAN_RUN_FLAGS",
                                       "--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1000:1000"))
USER = 10001
SAMPLE = os.path.join(harness.ROOT, "sample-data", "rating_events.ndjson")
GOLDEN = os.path.join(harness.ROOT, "sample-data", "expected", "all_time.json")
CHECKS = os.path.join(harness.ROOT, "sample-data", "check")
VOTES = 500         # of the sample's, seeded
# What Cloud Run sets in a job's task (and Kubernetes: KUBERNETES_SERVICE_HOST in every pod).
CLOUD_RUN = {"CLOUD_RUN_JOB": "rankings-night", "CLOUD_RUN_EXECUTION": "rankings-night-x7k2p",
             "CLOUD_RUN_TASK_INDEX": "0", "CLOUD_RUN_TASK_ATTEMPT": "0", "CLOUD_RUN_TASK_COUNT": "1"}
KUBERNETES = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
SEVERITIES = {"DEBUG", "INFO", "NOTICE", "WARNING", "ERROR"}
# A night with nothing to read: its job fails at once with 66, no Firestore needed.
NOTHING = {"RANKINGS_EXPORTS": "/var/lib/rankings/none"}
# What 0.4's image set in its environment, as a manifest of 0.4 may still give it.
IMAGE_04 = {"RANKINGS_OUTPUT": "/var/lib/rankings/all_time.json",
            "RANKINGS_FETCH": "/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore",
            "RANKINGS_EXPORTS": "/var/lib/rankings/firestore/current",
            "RANKINGS_PUBLISH": "/usr/libexec/rankings-publish-firestore", "RANKINGS_FLAGS": "--max-drop 1"}
emulator = None
made = []       # folders to remove at the end


def setUpModule():
    global emulator
    emulator = emu.Emulator()
    emulator.start()


def tearDownModule():
    if emulator is not None:
        emulator.stop()
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def scratch(prefix):
    path = tempfile.mkdtemp(prefix=prefix)
    made.append(path)
    return path


def podman(*args, timeout=300):
    return harness.run(["podman", *args], timeout=timeout)


def run_argv(env=None, volume=None, read_only=False, name=None, detach=False, mounts=(), args=(), rm=True):
    argv = ["podman", "run", *RUN_FLAGS, "--network", "host"]
    argv += ["--rm"] if rm else []
    argv += ["--detach"] if detach else []
    argv += ["--name", name] if name else []
    # What readOnlyRootFilesystem does in the manifest: the night may write its volume only.
    argv += ["--read-only", "--read-only-tmpfs=false"] if read_only else []
    if volume:
        argv += ["--volume", f"{volume}:/var/lib/rankings"]
    for host, inside in mounts:
        argv += ["--volume", f"{host}:{inside}:ro"]
    for key, value in (env or {}).items():
        argv += ["--env", f"{key}={value}"]
    return argv + [IMAGE, *args]


def run(timeout=600, **kwargs):
    return harness.run(run_argv(**kwargs), timeout=timeout)


def state_directory():
    """A volume for /var/lib/rankings, the image's user's as a PersistentVolumeClaim with
    fsGroup (or podman's named volume) would be."""
    path = scratch("rankings-image-state.")
    os.chown(path, USER, USER)
    return path


def json_lines(case, text):
    """Every line of text as a JSON object with a severity and a message."""
    lines = text.splitlines()
    case.expect("some lines", bool(lines), True)
    objects = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not isinstance(entry, dict):
            case.fail(f"not a JSON object: {line!r}")
        case.expect_in(f"severity of {line}", entry.get("severity"), SEVERITIES)
        case.expect(f"message of {line} is text", isinstance(entry.get("message"), str), True)
        objects.append(entry)
    return objects


def plain_lines(case, text):
    lines = text.splitlines()
    case.expect("some lines", bool(lines), True)
    for line in lines:
        case.expect(f"{line!r} is not JSON", line.startswith("{"), False)
    return lines


def wait_until(what, predicate, seconds=120):
    """A bound, not a timing assertion: predicate() is asked every half second."""
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"not within {seconds}s: {what}")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# The placeholders jobs/install.sh fills in, as the package's layout fills them (jobs/image.sh).
PACKAGE_PATHS = {"@BINDIR@": "/usr/bin", "@PKGLIBDIR@": "/usr/lib/rankings", "@SYSCONFDIR@": "/etc",
                 "@CRON_COMMENT@": "#"}


def rendered(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for placeholder, value in PACKAGE_PATHS.items():
        text = text.replace(placeholder, value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Image(harness.Case):
    """What the image is, before anything runs in it."""

    @classmethod
    def setUpClass(cls):
        done = podman("image", "inspect", IMAGE)
        cls.inspect = json.loads(done.stdout)[0]
        cls.config = cls.inspect["Config"]

    def test_runs_as_the_user_rankings_by_number(self):
        self.expect("USER", self.config.get("User"), f"{USER}:{USER}")
        done = harness.run(["podman", "run", "--rm", *RUN_FLAGS, "--entrypoint", "id", IMAGE])
        self.expect_exit(done, 0)
        self.expect("id", done.stdout.strip(), f"uid={USER}(rankings) gid={USER}(rankings) groups={USER}(rankings)")

    def test_the_state_directory_is_the_users(self):
        done = harness.run(["podman", "run", "--rm", *RUN_FLAGS, "--entrypoint", "stat", IMAGE,
                            "-c", "%u:%g %a", "/var/lib/rankings"])
        self.expect_exit(done, 0)
        self.expect("owner and mode", done.stdout.strip(), f"{USER}:{USER} 755")

    def test_tini_is_pid_1_and_no_arguments_is_the_night(self):
        self.expect("entry point", self.config.get("Entrypoint"),
                    ["/usr/bin/tini", "--", "/usr/libexec/rankings-entrypoint"])
        self.expect("command", self.config.get("Cmd") or [], [])

    def test_the_image_sets_no_setting(self):
        """The environment is the night's twelve settings, all the operator's (0.4's image set five)."""
        env = dict(e.split("=", 1) for e in self.config.get("Env", []))
        self.expect("settings the image sets", {k: v for k, v in env.items()
                                                if k.startswith("RANKINGS_") or k == "FIRESTORE_EMULATOR_HOST"}, {})
        self.expect("tini reaps as a subreaper", env.get("TINI_SUBREAPER"), "1")

    def test_adds_less_than_60_MB_to_its_base(self):
        size = self.inspect["Size"]
        base = json.loads(podman("image", "inspect", BASE).stdout)[0]["Size"]
        added = size - base
        print(f"#    {IMAGE}: {size / 1e6:.1f} MB; {BASE}: {base / 1e6:.1f} MB; added {added / 1e6:.1f} MB", flush=True)
        self.expect("added under 60 MB", added < 60_000_000, True)

    def test_the_binary_is_the_release_binary(self):
        done = harness.run(["podman", "run", "--rm", *RUN_FLAGS, "--entrypoint", "sha256sum", IMAGE, "/usr/bin/rankings"])
        self.expect_exit(done, 0)
        self.expect("sha256 of /usr/bin/rankings", done.stdout.split()[0], sha256(BINARY))
        version = harness.run([BINARY, "--version"]).stdout.split("\n")[0].split()[1]
        self.expect("tag", IMAGE.rsplit(":", 1)[1], version)
        self.expect("label", self.config.get("Labels", {}).get("org.opencontainers.image.version"), version)

    def test_the_night_is_the_checkouts(self):
        """The program and every module as in jobs/night, with the package's paths filled in;
        nothing else of 0.4's (rankings-fetch-firestore, rankings-publish-firestore, rankings-cron)."""
        done = harness.run(["podman", "run", "--rm", *RUN_FLAGS, "--entrypoint", "sh", IMAGE, "-c",
                            "cd /usr/lib/rankings && sha256sum * rankings_night/*.py 2>/dev/null; "
                            "ls /usr/libexec | grep '^rankings' | sed 's|^|libexec: |'"])
        self.expect_exit(done, 0)
        self.expect("in /usr/libexec", [l for l in done.stdout.splitlines() if l.startswith("libexec: ")],
                    ["libexec: rankings-entrypoint"])
        inside = {name: digest for digest, name in (line.split() for line in done.stdout.splitlines()
                                                     if not line.startswith("libexec: "))}
        self.expect("programs", sorted(n for n in inside if "/" not in n), ["rankings-night"])
        night = harness.NIGHT
        here = {name: rendered(os.path.join(night, name)) for name in inside}
        self.expect("digests", inside, here)
        self.expect("modules", sorted(n for n in inside if n.startswith("rankings_night/")),
                    sorted(f"rankings_night/{n}" for n in os.listdir(os.path.join(night, "rankings_night"))
                           if n.endswith(".py")))

    def test_no_configuration_file_units_or_cron(self):
        done = harness.run(["podman", "run", "--rm", *RUN_FLAGS, "--entrypoint", "sh", IMAGE, "-c",
                            "ls -d /etc/rankings.conf /etc/cron.d/rankings /etc/systemd/system/rankings.service "
                            "/lib/systemd/system/rankings.service 2>/dev/null; true"])
        self.expect("package files a container does not use", done.stdout, "")


class Check(harness.Case):
    """The same image validates documents in CI: `podman run IMAGE check FILE`."""

    def test_check_validates_the_fixture_document(self):
        done = run(mounts=[(GOLDEN, "/data/all_time.json")], args=["check", "/data/all_time.json"])
        self.expect_exit(done, 0, "1 document checked, all valid")
        self.expect("stdout", done.stdout, "")

    def test_check_refuses_a_wrong_document_with_its_lines(self):
        argv = run_argv(mounts=[(CHECKS, "/data")], args=["check", "-q", "wrong-types.json"])
        argv[argv.index(IMAGE):argv.index(IMAGE)] = ["--workdir", "/data"]
        done = harness.run(argv)
        with open(os.path.join(CHECKS, "wrong-types.expected.txt")) as f:
            expected = f.read()
        self.expect("status", done.returncode, 65)
        self.expect("problem lines", done.stderr, expected)

    def test_rankings_night_commands_read_the_environment(self):
        """`settings` in the image: the environment's, and the platform's own defaults, said so."""
        done = run(env=dict(CLOUD_RUN, RANKINGS_FIRESTORE_PROJECT="my-jokes-app"), args=["rankings-night", "settings"])
        self.expect_exit(done, 0)
        lines = done.stdout.splitlines()
        self.expect("settings", len(lines), 12)
        for line in ("RANKINGS_FIRESTORE_PROJECT=my-jokes-app    # environment",
                     "RANKINGS_RETRIES=0    # default on a container platform",
                     "RANKINGS_LOG_FORMAT=json    # default on a container platform",
                     "RANKINGS_STATE_DIRECTORY=/var/lib/rankings    # default"):
            self.expect_in("a line", line, lines)


class Settings(harness.Case):
    """Settings come from the environment, checked by the night's one table before anything runs."""

    def refused(self, env, said):
        state = state_directory()
        done = run(env=dict(CLOUD_RUN, **env), volume=state)
        self.expect("status", done.returncode, 78)
        self.expect("stdout", done.stdout, "")
        lines = done.stderr.splitlines()
        self.expect("one line", len(lines), 1)
        self.expect_in("the line", said, lines[0])
        self.expect("the state volume afterwards", harness.tree(state), {})
        return lines[0]

    def test_an_unknown_name_is_78_with_one_line(self):
        self.refused({"RANKINGS_FIRESTORE_PROJEKT": "my-jokes-app"},
                     "unknown setting RANKINGS_FIRESTORE_PROJEKT (did you mean RANKINGS_FIRESTORE_PROJECT?)")

    def test_a_bad_value_is_78_with_one_line(self):
        self.refused({"RANKINGS_FIRESTORE_PROJECT": "My Jokes"}, "RANKINGS_FIRESTORE_PROJECT=My Jokes: must be")
        self.refused({"RANKINGS_RETRIES": "11"}, "RANKINGS_RETRIES=11: must be a whole number from 0 to 10")

    def test_a_removed_mode_of_04_is_78_with_one_line(self):
        """A 0.4 manifest's window night: refused before anything is read or written."""
        self.refused(dict(IMAGE_04, RANKINGS_FIRESTORE_PROJECT="my-jokes-app", RANKINGS_FIRESTORE_SINCE="-30d"),
                     "environment: RANKINGS_FIRESTORE_SINCE=-30d: a window night is gone")

    def test_on_a_platform_the_refusal_is_a_json_line_too(self):
        """Cloud Logging reads the one line as the others: an ERROR with its message."""
        line = self.refused({"RANKINGS_RETRIES": "eleven"}, "RANKINGS_RETRIES=eleven")
        entry = json_lines(self, line)[0]
        self.expect("severity", entry["severity"], "ERROR")
        self.expect("status", entry.get("status"), 78)


class Logs(harness.Case):
    """A night that fails at once (nothing to read: 66, which another try may change): its lines
    and its tries, as the platform's variables and the settings make them."""

    def tries(self, entries):
        return [e["message"] for e in entries if ": try " in e["message"]]

    def test_plain_lines_off_a_platform(self):
        done = run(env=dict(NOTHING, RANKINGS_RETRIES="0"), volume=state_directory())
        self.expect("status", done.returncode, 66)
        lines = plain_lines(self, done.stderr)
        self.expect_in("first line", "rankings-night: night starting (hand;", lines[0])
        self.expect_in("the try", "rankings-night: aggregate: try 1 of 1", lines)
        self.expect_in("the job's own line", "rankings: error: cannot read /var/lib/rankings/none", done.stderr)
        self.expect("the last line", lines[-1].startswith("rankings-night: error: night failed with status 66"), True)

    def test_json_lines_and_no_retries_on_kubernetes(self):
        done = run(env=dict(NOTHING, **KUBERNETES), volume=state_directory())
        self.expect("status", done.returncode, 66)
        entries = json_lines(self, done.stderr)
        self.expect_in("first line", "night starting (container;", entries[0]["message"])
        self.expect("tries", self.tries(entries), ["rankings-night: aggregate: try 1 of 1"])
        self.expect("last line's severity and status", (entries[-1]["severity"], entries[-1].get("status")), ("ERROR", 66))

    def test_json_lines_on_cloud_run_and_retries_when_asked(self):
        """RANKINGS_RETRIES=1 on Cloud Run: a second try, 5 minutes later; `podman stop` in that
        pause ends the night at once, 143, no second try."""
        name = f"rankings-image-retry-{os.getpid()}"
        env = dict(NOTHING, RANKINGS_RETRIES="1", **CLOUD_RUN)
        try:
            self.expect_exit(harness.run(run_argv(env=env, volume=state_directory(), name=name, detach=True, rm=False)), 0)
            wait_until("the pause before the second try",
                       lambda: "trying again in 300s" in podman("logs", name).stderr)
            started = time.monotonic()
            self.expect_exit(podman("stop", name), 0)
            status = podman("wait", name).stdout.strip()
            seconds = time.monotonic() - started
            said = podman("logs", name).stderr
        finally:
            podman("rm", "--force", name)
        self.expect("exit status (143: stopped by SIGTERM in the pause)", status, "143")
        self.expect("stopped within seconds", seconds < 8, True)
        entries = json_lines(self, said)
        self.expect("tries", self.tries(entries), ["rankings-night: aggregate: try 1 of 2"])
        self.expect_in("the pause", "rankings-night: warning: aggregate: failed with status 66 (no input) on try 1; "
                                    "trying again in 300s", [e["message"] for e in entries])

    def test_json_lines_when_the_setting_asks_off_a_platform(self):
        done = run(env=dict(NOTHING, RANKINGS_RETRIES="0", RANKINGS_LOG_FORMAT="json"), volume=state_directory())
        self.expect("status", done.returncode, 66)
        entries = json_lines(self, done.stderr)
        self.expect_in("first line", "night starting (hand;", entries[0]["message"])


class Nights(harness.Case):
    """Nights against the emulator, in order, on one project and one state volume (the tests'
    names keep their order): each builds on the one before."""
    project = "demo-rankings-image"

    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(cls.project, emulator.address)
        cls.work = scratch("rankings-image-work.")
        cls.votes = os.path.join(cls.work, "votes.ndjson")
        with open(SAMPLE) as sample, open(cls.votes, "w") as out:
            out.writelines(line for _, line in zip(range(VOTES), sample))
        cls.seeded = emu.seed(cls.db, cls.votes)
        cls.state = state_directory()
        cls.new_votes = []

    def env(self, **more):
        env = {"RANKINGS_FIRESTORE_PROJECT": self.project, "FIRESTORE_EMULATOR_HOST": emulator.address,
               "RANKINGS_METRICS": "/var/lib/rankings/rankings.prom"}
        env.update(more)
        return env

    def night(self, volume=True, **more):
        return run(env=self.env(**more), volume=self.state if volume else None, read_only=volume)

    def record(self):
        with open(os.path.join(self.state, "firestore", "current", ".night.json")) as f:
            return json.load(f)

    def prom(self):
        with open(os.path.join(self.state, "rankings.prom")) as f:
            return dict(line.split() for line in f if line.strip() and not line.startswith("#"))

    def published(self):
        return emu.show(self.db, "weekly_rankings", "all_time")

    def unpublish(self):
        """The board taken out of Firestore, so that a night's publish is seen whatever it
        writes (the same fields again leave the emulator's updateTime as it was)."""
        self.db.collection("weekly_rankings").document("all_time").delete()
        self.expect("the board before the night", self.published(), {"exists": False})

    def matches(self, golden):
        done = harness.run([sys.executable, os.path.join(harness.ROOT, "Tests", "firestore-loop", "emulator.py"),
                            emulator.address, self.project, "matches", "weekly_rankings", "all_time", golden])
        self.expect_exit(done, 0)

    def truth(self):
        """What `rankings aggregate` makes of every vote the emulator holds (the seeded ones and
        the votes added since, as export lines) at the published board's computed_at."""
        stamp = datetime.datetime.fromisoformat(self.published()["fields"]["computed_at"]["Timestamp"])
        computed_at = stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
        votes = os.path.join(self.work, "truth-votes.ndjson")
        with open(self.votes) as seeded, open(votes, "w") as out:
            out.write(seeded.read())
            for name, fields in self.new_votes:
                when = fields["timestamp"]
                line = dict(id=name, **{k: v for k, v in fields.items() if k != "timestamp"},
                            timestamp={"_seconds": int(when.timestamp()), "_nanoseconds": when.microsecond * 1000})
                out.write(json.dumps(line) + "\n")
        done = run(mounts=[(votes, "/data/votes.ndjson")], args=["aggregate", "--computed-at", computed_at,
                                                                    "/data/votes.ndjson"])
        self.expect_exit(done, 0)
        golden = os.path.join(self.work, "truth.json")
        with open(golden, "w") as out:
            out.write(done.stdout)
        return golden

    def hung_night(self, name):
        """A night started detached while the emulator is frozen, once it has begun its fetch (whose
        first call, the proof's probe, then waits for ever); the caller ends it, then thaws."""
        os.killpg(emulator.process.pid, signal.SIGSTOP)
        done = harness.run(run_argv(env=self.env(**CLOUD_RUN), volume=self.state, read_only=True, name=name,
                                    detach=True, rm=False))
        self.expect_exit(done, 0)
        wait_until("the fetch begins", lambda: "rankings-night: fetch: try 1 of 1" in podman("logs", name).stderr)
        time.sleep(1)       # into its first call

    def thaw(self, name):
        os.killpg(emulator.process.pid, signal.SIGCONT)
        podman("rm", "--force", name)

    def test_1_a_first_night_publishes_what_the_votes_count(self):
        done = self.night(**CLOUD_RUN)
        self.expect_exit(done, 0)
        self.matches(self.truth())
        record = self.record()
        self.expect("mode, read", (record["mode"], record["documents_read"]), ("full", self.seeded))
        # On a volume the snapshot stays plain: the night compresses it only without one.
        self.expect("the snapshot's form", record.get("snapshot_form"), None)
        self.expect("the snapshot", sorted(n for n in os.listdir(os.path.join(self.state, "firestore", "current"))
                                           if n.startswith("rating_events")), ["rating_events.ndjson"])
        entries = json_lines(self, done.stderr)
        last = entries[-1]
        self.expect("last line", {k: last.get(k) for k in ("severity", "status", "mode", "documents_read",
                                                           "snapshot_documents")},
                    {"severity": "INFO", "status": 0, "mode": "full", "documents_read": self.seeded,
                     "snapshot_documents": self.seeded})
        self.expect_in("scheduler", "night starting (container;", entries[0]["message"])
        self.expect("tries (the platform's retries, not the night's)", [e["message"] for e in entries if ": try " in e["message"]],
                    ["rankings-night: fetch: try 1 of 1", "rankings-night: aggregate: try 1 of 1",
                     "rankings-night: prove: try 1 of 1", "rankings-night: publish: try 1 of 1"])
        self.expect("warnings", [e["message"] for e in entries if e["severity"] != "INFO"], [])
        self.expect("every line the night's", [e["message"] for e in entries
                                               if not e["message"].startswith(("rankings-night: ", "rankings: "))], [])
        prom = self.prom()
        self.expect("the one metrics file", (prom["rankings_night_last_run_exit_status"], prom["rankings_night_boards_proven"],
                                             prom["rankings_fetch_full"]), ("0", "1", "1"))

    def test_2_a_second_night_with_the_volume_reads_only_the_new_votes(self):
        """With 0.4's image settings still in the manifest: the same night, and one WARNING naming them."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=123000)
        week = "%d-W%02d" % now.isocalendar()[:2]
        with open(self.votes) as seeded:
            jokes = sorted({json.loads(line)["joke_id"] for line in seeded})[:3]
        for number, (joke, rating) in enumerate(zip(jokes * 2, [5, 5, 1, 5, 1, 5])):
            device = f"IMAGE-TEST-DEVICE-{number}"
            self.new_votes.append((f"{device}_{joke}_{week}", {"joke_id": joke, "rating": rating,
                                                               "device_id": device, "week_id": week,
                                                               "timestamp": now}))
        emu.write(self.db, "rating_events", self.new_votes)
        done = self.night(**IMAGE_04, **CLOUD_RUN)
        self.expect_exit(done, 0)
        record = self.record()
        self.expect("mode, read, snapshot", (record["mode"], record["documents_read"], record["snapshot_documents"]),
                    ("incremental", len(self.new_votes), self.seeded + len(self.new_votes)))
        prom = self.prom()
        self.expect("the one metrics file", (prom["rankings_fetch_documents_read"], prom["rankings_fetch_full"]),
                    (str(len(self.new_votes)), "0"))
        self.matches(self.truth())
        entries = json_lines(self, done.stderr)
        warnings = [e["message"] for e in entries if e["severity"] == "WARNING"]
        self.expect("warnings", len(warnings), 1)
        for name in IMAGE_04:
            self.expect_in("0.4's settings named", f"{name}=", warnings[0])
        last = entries[-1]
        self.expect("last line's figures", (last.get("mode"), last.get("documents_read")),
                    ("incremental", len(self.new_votes)))

    def test_3_podman_stop_mid_night_is_143_publishes_nothing_and_changes_nothing(self):
        name = f"rankings-image-stop-{os.getpid()}"
        self.unpublish()
        fetched = harness.tree(os.path.join(self.state, "firestore"))
        with open(os.path.join(self.state, "all_time.json"), "rb") as f:
            board = f.read()
        try:
            self.hung_night(name)
            self.orphans_are_reaped(name)
            stopped = podman("stop", name)                  # SIGTERM, then SIGKILL after 10 s
            self.expect_exit(stopped, 0)
            status = podman("wait", name).stdout.strip()
            said = podman("logs", name).stderr
        finally:
            self.thaw(name)
        self.expect("exit status (143: stopped by SIGTERM within podman's 10 s, not killed)", status, "143")
        last = json_lines(self, said)[-1]
        self.expect("last line", (last["severity"], last.get("status")), ("ERROR", 143))
        self.expect("the board in Firestore (not published)", self.published(), {"exists": False})
        self.expect("the fetch's folders (current, nights, no partial one)",
                    harness.tree(os.path.join(self.state, "firestore")), fetched)
        with open(os.path.join(self.state, "all_time.json"), "rb") as f:
            self.expect("the board on the volume", f.read(), board)

    def orphans_are_reaped(self, name):
        """PID 1 is tini: a process orphaned in the container is its child, and reaped when it
        ends (under a PID 1 that never waits, it would stay a zombie for the container's life)."""
        cmdline = podman("exec", name, "cat", "/proc/1/cmdline").stdout
        self.expect("PID 1", cmdline.split("\0")[0], "/usr/bin/tini")
        done = podman("exec", name, "sh", "-c", "sh -c 'exec sleep 1' & echo $!")
        orphan = done.stdout.strip()
        self.expect("an orphan's id", orphan.isdigit(), True)

        def gone():     # a zombie keeps its /proc entry until it is waited for
            return podman("exec", name, "sh", "-c", f"cat /proc/{orphan}/stat 2>/dev/null || true").stdout == ""
        wait_until(f"the orphan {orphan} reaped", gone, 60)

    def test_4_a_night_killed_outright_changes_nothing(self):
        """What a platform's SIGKILL (a task timeout, the memory limit) leaves mid-fetch: the
        state as it was (no partial folder, current where it was), nothing published."""
        name = f"rankings-image-kill-{os.getpid()}"
        fetched = harness.tree(os.path.join(self.state, "firestore"))
        try:
            self.hung_night(name)
            podman("kill", "--signal", "KILL", name)
            status = podman("wait", name).stdout.strip()
        finally:
            self.thaw(name)
        self.expect("exit status", status, "137")
        self.expect("the fetch's folders", harness.tree(os.path.join(self.state, "firestore")), fetched)
        self.expect("the board in Firestore (not published)", self.published(), {"exists": False})

    def test_5_the_next_night_builds_on_the_last_good_one(self):
        self.unpublish()
        done = self.night(**CLOUD_RUN)
        self.expect_exit(done, 0)
        self.matches(self.truth())
        record = self.record()
        self.expect("the chain goes on (mode, read)", (record["mode"], record["documents_read"]),
                    ("incremental", len(self.new_votes)))
        leftovers = [n for n in os.listdir(os.path.join(self.state, "firestore")) if n.startswith(".partial-")]
        self.expect("partial folders", leftovers, [])

    def test_6_a_night_without_a_volume_on_a_platform_reads_in_full_compressed(self):
        """No volume on Cloud Run: the container's files are its memory, so the night keeps the
        snapshot compressed by itself (no setting), reads in full, and is proven all the same."""
        self.unpublish()
        done = self.night(volume=False, **CLOUD_RUN)
        self.expect_exit(done, 0)
        entries = json_lines(self, done.stderr)
        last = entries[-1]
        self.expect("the night's figures", (last.get("status"), last.get("mode"), last.get("documents_read")),
                    (0, "full", self.seeded + len(self.new_votes)))
        why = "rankings-night: fetch: rest: a full read: the snapshot is kept compressed"
        self.expect("why full", [e["message"] for e in entries if e["message"].startswith(why)] != [], True)
        self.expect("proven", [e["message"] for e in entries if "the board is proven" in e["message"]] != [], True)
        self.matches(self.truth())


if __name__ == "__main__":
    harness.main()
