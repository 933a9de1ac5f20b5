"""The files an operator copies to schedule the image: jobs/container/cronjob.yaml (parsed with
PyYAML) and jobs/container/cloud-run.sh (its commands split as the shell splits them, its
variables filled in by the shell). Each must say what docs/containers.md promises: midnight New
York time, one night at a time, the platform's retries bounded, a deadline, the state on a
volume, a non-root user; Firestore read and write for the night's account and nothing else. Every
gcloud flag used must be one the installed gcloud documents for that command.
"""
import os
import re
import shlex
import subprocess
import sys
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
import yaml  # noqa: E402

CONTAINER = os.path.join(harness.ROOT, "jobs", "container")
FINAL = [64, 65, 70, 78]    # statuses.py's FINAL: another try cannot change them


def longest_try():
    """The night's own limits added up (night.longest_try) for a project with the 30-day board on."""
    from rankings_night import night, settings
    return night.longest_try(settings.from_environment({"RANKINGS_FIRESTORE_PROJECT": "p", "RANKINGS_MONTHLY": "yes"}))


def release():
    """The version the package is (jobs/debian/changelog's first entry, which jobs/package.sh holds
    to the binary's --version, and the image's tag is the binary's)."""
    with open(os.path.join(harness.ROOT, "jobs", "debian", "changelog")) as f:
        return re.match(r"rankings \(([^)-]+)-[^)]+\)", f.readline())[1]


def load_manifest():
    with open(os.path.join(CONTAINER, "cronjob.yaml")) as f:
        return {d["kind"]: d for d in yaml.safe_load_all(f) if d}


def commands():
    """The script's commands as argv lists, $VARIABLES filled in by sh from its assignments."""
    with open(os.path.join(CONTAINER, "cloud-run.sh")) as f:
        text = f.read()
    assignments = "\n".join(line for line in text.splitlines() if re.match(r"[A-Z_]+=", line))
    names = re.findall(r"^([A-Z_]+)=", assignments, re.M)
    printed = subprocess.run(["sh", "-c", assignments + "\n" + "".join(f'printf "%s\\0" "${n}"\n' for n in names)],
                             stdout=subprocess.PIPE, text=True, check=True).stdout.split("\0")[:-1]
    values = dict(zip(names, printed))
    logical, argvs = text.replace("\\\n", " "), []
    for line in logical.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or re.match(r"[A-Z_]+=", line):
            continue
        for part in re.split(r"\|\||\|", line):
            words = shlex.split(part, comments=True)
            expanded = [re.sub(r"\$\{?([A-Z_]+)\}?", lambda m: values[m[1]], w) for w in words]
            if expanded:
                argvs.append(expanded)
    return values, argvs


def flags(argv):
    """{--flag: value} of a gcloud command (--flag VALUE or --flag=VALUE; a bare flag: True)."""
    out, i = {}, 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("--"):
            if "=" in word:
                key, value = word.split("=", 1)
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                key, value = word, argv[i + 1]
                i += 1
            else:
                key, value = word, True
            out[key] = value
        i += 1
    return out


VERBS = {"create", "deploy", "add-iam-policy-binding", "enable", "print-access-token", "execute", "update"}
TARGETS = {"http", "pubsub", "app-engine"}     # `gcloud scheduler jobs create http`


def verb(argv):
    """The command's words, through its verb: `run jobs deploy`, `scheduler jobs create http`."""
    words = []
    for word in argv[1:]:
        if word.startswith("-"):
            break
        if words and words[-1] in VERBS and word not in TARGETS:
            break
        words.append(word)
        if word in TARGETS:
            break
    return " ".join(words)


class CronJob(harness.Case):
    @classmethod
    def setUpClass(cls):
        cls.kinds = load_manifest()
        cls.cron = cls.kinds["CronJob"]["spec"]
        cls.job = cls.cron["jobTemplate"]["spec"]
        cls.pod = cls.job["template"]["spec"]

    def test_midnight_new_york_time(self):
        self.expect("schedule", self.cron["schedule"], "0 0 * * *")
        self.expect("timeZone", self.cron["timeZone"], "America/New_York")
        zoneinfo.ZoneInfo(self.cron["timeZone"])

    def test_one_night_at_a_time(self):
        self.expect("concurrencyPolicy", self.cron["concurrencyPolicy"], "Forbid")

    def test_bounded_retries_and_a_deadline(self):
        self.expect("backoffLimit is a small count", self.job["backoffLimit"] in range(0, 6), True)
        self.expect("activeDeadlineSeconds is positive", self.job["activeDeadlineSeconds"] > 0, True)
        self.expect("restartPolicy (a retry is a new pod)", self.pod["restartPolicy"], "Never")
        # Each try may run the night's longest, as its own limits add up, with the 30-day board.
        tries = self.job["backoffLimit"] + 1
        self.expect("the deadline holds every try", self.job["activeDeadlineSeconds"] >= tries * longest_try(), True)

    def test_statuses_another_try_cannot_change_fail_the_job(self):
        rule = self.job["podFailurePolicy"]["rules"][0]
        self.expect("action", rule["action"], "FailJob")
        self.expect("exit codes", (rule["onExitCodes"]["operator"], sorted(rule["onExitCodes"]["values"])), ("In", FINAL))
        self.expect("container", rule["onExitCodes"]["containerName"], self.pod["containers"][0]["name"])

    def test_state_on_a_persistent_volume_claim(self):
        claim = self.kinds["PersistentVolumeClaim"]
        volumes = {v["name"]: v for v in self.pod["volumes"]}
        mounts = {m["mountPath"]: m["name"] for m in self.pod["containers"][0]["volumeMounts"]}
        self.expect_in("a mount at /var/lib/rankings", "/var/lib/rankings", mounts)
        volume = volumes[mounts["/var/lib/rankings"]]
        self.expect("its claim", volume["persistentVolumeClaim"]["claimName"], claim["metadata"]["name"])
        self.expect("access mode", claim["spec"]["accessModes"], ["ReadWriteOnce"])

    def test_the_image_is_this_version(self):
        # 0.4's manifest still pinned 0.3.0's image.
        container, = self.pod["containers"]
        self.expect("the CronJob's image tag", container["image"].rsplit(":", 1)[1], release())

    def test_non_root_as_the_images_user(self):
        context = self.pod["securityContext"]
        self.expect("runAsNonRoot", context["runAsNonRoot"], True)
        self.expect("user, group, volume group", (context["runAsUser"], context["runAsGroup"], context["fsGroup"]),
                    (10001, 10001, 10001))
        container = self.pod["containers"][0]["securityContext"]
        self.expect("no privilege escalation", container["allowPrivilegeEscalation"], False)
        self.expect("read-only root", container["readOnlyRootFilesystem"], True)

    def test_no_service_variables_the_night_would_refuse(self):
        """A Service named rankings would otherwise put RANKINGS_SERVICE_HOST in the pod."""
        self.expect("enableServiceLinks", self.pod.get("enableServiceLinks"), False)

    def test_the_night_with_its_project_and_no_arguments(self):
        container = self.pod["containers"][0]
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        self.expect("settings given", sorted(env), ["RANKINGS_FIRESTORE_PROJECT"])
        self.expect("no args (the night)", "args" in container or "command" in container, False)
        self.expect("termination grace for SIGTERM", self.pod["terminationGracePeriodSeconds"] >= 10, True)


class CloudRun(harness.Case):
    @classmethod
    def setUpClass(cls):
        cls.values, cls.argvs = commands()
        cls.gcloud = {}
        for argv in cls.argvs:
            if argv[0] == "gcloud":
                cls.gcloud.setdefault(verb(argv), []).append(argv)

    def one(self, command):
        found = self.gcloud.get(command, [])
        self.expect(f"`gcloud {command}` commands", len(found), 1)
        return found[0]

    def test_the_job(self):
        argv = self.one("run jobs deploy")
        given = flags(argv)
        self.expect("--tasks", given.get("--tasks"), "1")
        self.expect("--max-retries is a small count", given.get("--max-retries", "").isdigit()
                    and int(given["--max-retries"]) <= 5, True)
        self.expect_in("--task-timeout", "--task-timeout", given)
        minutes = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?", given["--task-timeout"])
        self.expect("--task-timeout above the longest try of the night's own limits",
                    bool(minutes) and (int(minutes[1] or 0) * 60 + int(minutes[2] or 0)) * 60 > longest_try(), True)
        self.expect("--service-account", given.get("--service-account"), self.values["SA"])
        self.expect("--set-env-vars", given.get("--set-env-vars"), f"RANKINGS_FIRESTORE_PROJECT={self.values['PROJECT']}")
        self.expect("--image", given.get("--image"), self.values["IMAGE"])
        self.expect("the image's version", self.values["VERSION"], release())

    def test_the_schedule(self):
        argv = self.one("scheduler jobs create http")
        given = flags(argv)
        job = self.one("run jobs deploy")[4]
        self.expect("--schedule", given.get("--schedule"), "0 0 * * *")
        self.expect("--time-zone", given.get("--time-zone"), "America/New_York")
        self.expect("--http-method", given.get("--http-method"), "POST")
        self.expect("--uri", given.get("--uri"), f"https://run.googleapis.com/v2/projects/{self.values['PROJECT']}"
                                                 f"/locations/{self.values['REGION']}/jobs/{job}:run")
        self.expect("--oauth-service-account-email", given.get("--oauth-service-account-email"),
                    self.values["SCHEDULER_SA"])

    def test_the_nights_account_may_read_and_write_firestore_and_nothing_else(self):
        bindings = self.gcloud.get("projects add-iam-policy-binding", [])
        roles = [(flags(a)["--member"], flags(a)["--role"]) for a in bindings]
        self.expect("project roles", roles, [(f"serviceAccount:{self.values['SA']}", "roles/datastore.user")])
        job = self.one("run jobs add-iam-policy-binding")
        self.expect("the schedule's account may run the job", (job[4], flags(job)["--member"], flags(job)["--role"]),
                    (self.one("run jobs deploy")[4], f"serviceAccount:{self.values['SCHEDULER_SA']}", "roles/run.invoker"))

    def test_every_flag_is_one_gcloud_documents(self):
        for command, argvs in self.gcloud.items():
            done = harness.run(["gcloud", *command.split(), "--help"], timeout=120,
                               env=dict(os.environ, CLOUDSDK_CORE_DISABLE_PROMPTS="1", TERM="dumb"))
            text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
            self.expect(f"gcloud {command} --help", done.returncode, 0)
            for argv in argvs:
                for flag in flags(argv):
                    self.expect_in(f"gcloud {command}: {flag}", flag, text)


if __name__ == "__main__":
    harness.main()
