"""rankings-night's commands: arguments parsed, settings loaded, failures mapped to exit statuses."""
import json
import os
import subprocess
import sys
import time

from . import folders, history, paths, plan as plans, record as records, settings as setting
from .folders import refuse_root
from .log import Log
from .night import Night
from .wiring import wire
from .snapshot import Damaged, format_time
from .statuses import CONFIG, USAGE, Failure
from .zone import zone

USAGE_TEXT = """Usage: rankings-night COMMAND [--config FILE | --environment] [OPTION...]

  run [-- FLAG...]   the night once, now: fetch, aggregate every board, prove, publish (what systemd's
                     rankings.service runs); FLAGs go to `rankings aggregate` after RANKINGS_FLAGS
                     (`-- --max-drop 100` accepts a drop once)
  cron               what /etc/cron.d/rankings runs every hour: the night, once a day, in the
                     hour after midnight New York time, unless rankings.timer is active
  status [-n N] [--json]   the last N nights (default 7): each step's result and why it failed
  plan               what tonight's fetch would do and why, without reading Firestore
  settings           the settings as the night reads them, or the first one it refuses (78)

--config FILE      the configuration (default @SYSCONFDIR@/rankings.conf)
--environment      the settings from the environment instead (a container's RANKINGS_* variables)

Exit status: the night's (0 success; 64 usage; 69 a fetch or publish that still failed; 73 a
file it cannot create; 75 another night running; 78 a setting refused; a failed job's own
status). See rankings(1): "The night", and /usr/share/doc/rankings/operators-guide.md.gz.
""".replace("@SYSCONFDIR@", paths.SYSCONFDIR)


def on_a_platform(environ):
    """Cloud Run Jobs and Kubernetes set these: retries are the platform's, logs are JSON."""
    return any(k in environ for k in ("CLOUD_RUN_JOB", "CLOUD_RUN_EXECUTION", "KUBERNETES_SERVICE_HOST"))


def another_task(environ):
    """Why this task runs no night: of several a platform started, only task 0 runs one (nights
    side by side would only contend for the lock)."""
    count, index = environ.get("CLOUD_RUN_TASK_COUNT", "1"), environ.get("CLOUD_RUN_TASK_INDEX", "0")
    if count.isdigit() and int(count) > 1 and index.isdigit() and int(index) != 0:
        return (f"task {index} of {count} (CLOUD_RUN_TASK_INDEX, CLOUD_RUN_TASK_COUNT): only task 0 runs the night; "
                f"nothing to do")
    return None


def parse(argv):
    """(command, options, flags)."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        return "help", {}, []
    command, options, rest = argv[0], {"config": paths.CONFIG, "environment": False, "count": 7, "json": False}, argv[1:]
    cut = rest.index("--") if "--" in rest else len(rest)
    rest, flags = rest[:cut], rest[cut + 1:]
    while rest:
        word = rest.pop(0)
        if word == "--config" and rest:
            options["config"] = rest.pop(0)
        elif word.startswith("--config="):
            options["config"] = word.split("=", 1)[1]
        elif word == "--environment":
            options["environment"] = True
        elif word == "--json" and command == "status":
            options["json"] = True
        elif word == "-n" and rest and rest[0].isdigit() and command == "status":
            options["count"] = int(rest.pop(0))
        elif word in ("-h", "--help"):
            return "help", {}, []
        else:
            raise Failure(USAGE, f"{command}: unknown argument {word!r} (rankings-night --help)")
    if flags and command != "run":
        raise Failure(USAGE, f"{command}: takes no flags after --")
    if command not in ("run", "cron", "status", "plan", "settings"):
        raise Failure(USAGE, f"unknown command {command!r} (rankings-night --help)")
    return command, options, flags


def load(options, environ):
    if options["environment"]:
        settings = setting.from_environment(environ)
        if on_a_platform(environ):
            # The platform retries a failed task and reads JSON logs: its defaults, as `settings` shows.
            for name, text, value in (("RANKINGS_RETRIES", "0", 0), ("RANKINGS_LOG_FORMAT", "json", "json")):
                if name not in settings.given:
                    settings.given[name], settings.where[name] = text, "default on a container platform"
                    setattr(settings, setting.attribute(name), value)
        return settings
    return setting.read_file(options["config"])


def timer_active(systemd="/run/systemd/system"):
    """systemd is the init and rankings.timer is active (an enabled timer not running runs no
    night, so cron must)."""
    if not os.path.isdir(systemd):
        return False
    try:
        return subprocess.run(["systemctl", "is-active", "--quiet", "rankings.timer"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_night(settings, scheduler, flags, environ, config=None):
    settings.require("RANKINGS_OUTPUT")
    wire(settings)      # settings that contradict each other: 78 before anything runs
    # Before the log is opened: root's log file would lock the job's user out of it.
    command = "rankings-night run" + (f" --config {config}" if config else " --environment")
    for place in [settings.output] + ([settings.log_file] if settings.log_file else []):
        refuse_root(os.path.dirname(os.path.abspath(place)), command, in_container=on_a_platform(environ))
    try:
        log = Log(form=settings.log_format, path=settings.log_file,
                  syslog_ident="rankings" if scheduler == "cron" and not settings.log_file else None)
    except OSError as error:
        raise Failure(73, f"cannot append to RANKINGS_LOG_FILE {settings.log_file}: {error.strerror}") from None
    try:
        return Night(settings, log, scheduler, flags, environ).run()
    except Failure as failure:
        log.error(str(failure), status=failure.status)
        return failure.status


def cron(settings, environ, config):
    """Debian's cron ignores CRON_TZ: the entry fires hourly, and the night goes ahead in New York's
    first hour of the day, once that day (a night that started in the future did not run today)."""
    now = time.time()
    local = zone()(now)
    if local.hour != 0:
        return 0
    if timer_active():
        Log(syslog_ident="rankings")("rankings.timer is active, so systemd runs the night; nothing to do")
        return 0
    settings.require("RANKINGS_OUTPUT")
    state = os.path.dirname(os.path.abspath(settings.output))
    booted = history.boot()
    starts = [history.real_start(n, now, booted) for n in history.read(state) if n["scheduler"] == "cron"]
    if any(start is not None and zone()(start).date() == local.date() for start in starts):
        return 0
    return run_night(settings, "cron", [], environ, config)


def show_plan(settings):
    settings.require("RANKINGS_OUTPUT")
    directory = wire(settings, running=False).fetch_directory
    if directory is None:
        return "RANKINGS_FETCH does not run rankings-fetch-firestore: the night reads RANKINGS_EXPORTS as it is"
    now = time.time_ns()
    current = os.path.join(directory, "current")
    folder = os.path.realpath(current) if os.path.islink(current) else None
    previous, damage = None, "no previous night"
    if folder is not None:
        try:
            previous = records.read(folder, now)
        except Damaged as error:
            damage = f"the previous night's record cannot be used: {error}"
    tonight = plans.plan(settings, previous, damage, now)
    lines = [f"tonight's fetch: {tonight.mode}", f"why: {tonight.reason}"]
    if tonight.watermark is not None:
        lines.append(f"asks for: the votes stamped at or after {format_time(tonight.watermark)} "
                     f"(RANKINGS_FIRESTORE_MARGIN before the last night's readTime), then proves the merge by COUNT")
    if tonight.since is not None:
        lines.append(f"asks for: the votes stamped at or after {format_time(tonight.since)}")
    if previous is not None:
        lines.append(f"previous night: {folder}: {previous['mode']}, read at {previous.get('read_time')}, "
                     f"{previous.get('snapshot_documents')} documents, last full read {previous.get('last_full_read_time')}")
    return "\n".join(lines)


def main(argv, environ=None):
    environ = dict(os.environ if environ is None else environ)
    try:
        command, options, flags = parse(argv)
        if command == "help":
            print(USAGE_TEXT, end="")
            return 0
        settings = load(options, environ)
        if command == "run" and another_task(environ):
            Log(form=settings.log_format)(another_task(environ))
            return 0
        if command == "run":
            scheduler = "container" if on_a_platform(environ) else "systemd" if "INVOCATION_ID" in environ else "hand"
            return run_night(settings, scheduler, flags, environ, None if options["environment"] else options["config"])
        if command == "cron":
            return cron(settings, environ, options["config"])
        if command == "status":
            settings.require("RANKINGS_OUTPUT")
            nights = history.read(os.path.dirname(os.path.abspath(settings.output)), Log().warning)
            directory = history.fetch_directory(settings)
            held = (*folders.held(directory), directory) if directory and os.path.isdir(directory) else None
            text = json.dumps(history.last(nights, options["count"]), indent=1) if options["json"] \
                else history.show(nights, options["count"], zone(), held)
            if text:
                print(text)
            return 0
        if command == "plan":
            print(show_plan(settings))
            return 0
        for name, row in setting.TABLE.items():
            text = settings.given.get(name) or row.default
            quoted = f'"{text}"' if " " in text or "(" in text else text
            print(f"{name}={quoted}" + (f"    # {settings.where[name]}" if name in settings.where else "    # default"))
        return 0
    except Failure as failure:
        message = f"{'error: ' if failure.status != CONFIG else ''}{failure}"
        Log(form=refusal_form(argv, environ)).error(message, status=failure.status)
        if argv[:1] == ["cron"]:
            said_to_syslog(message)     # cron mails standard error to nobody reading
        return failure.status
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # noqa: BLE001 (a bug: one line, the status the docs give bugs)
        print(f"rankings-night: error: unexpected {type(error).__name__}: {error} (a bug in rankings-night)",
              file=sys.stderr, flush=True)
        return 70


def refusal_form(argv, environ):
    """A container's refusal is a line of its log like the others: JSON where the night's lines
    would be (read from the variables as given: the setting refused may be RANKINGS_LOG_FORMAT)."""
    if "--environment" not in argv:
        return "plain"
    given = environ.get("RANKINGS_LOG_FORMAT")
    return given if given in ("plain", "json") else "json" if on_a_platform(environ) else "plain"


def rankings_cron(argv, environ=None):
    """/usr/libexec/rankings-cron CONFIG [FLAG...], which cron entries of earlier versions name:
    the night with CONFIG, after FLAGs by hand; without FLAGs, nothing while rankings.timer is
    enabled. (0.3's wrapper; the shipped entry now runs `rankings-night cron`.)"""
    if argv[:1] in (["-h"], ["--help"]):
        print("Usage: rankings-cron [CONFIG [FLAG...]]: rankings-night run --config CONFIG -- FLAG... "
              "(see rankings-night --help)")
        return 0
    config, flags = (argv[0] if argv else paths.CONFIG), argv[1:]
    if not flags and timer_active():
        return 0
    environ = dict(os.environ if environ is None else environ)
    try:
        settings = setting.read_file(config)
        return run_night(settings, "cron" if not flags else "hand", flags, environ, config)
    except Failure as failure:
        print(f"rankings-night: {failure}", file=sys.stderr, flush=True)
        said_to_syslog(str(failure))
        return failure.status


def said_to_syslog(message):
    try:
        Log(syslog_ident="rankings").error(message)
    except OSError:
        pass
