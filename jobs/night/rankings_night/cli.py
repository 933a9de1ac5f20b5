"""rankings-night's commands: arguments parsed, settings loaded, failures mapped to exit statuses."""
import json
import os
import re
import subprocess
import sys
import time

from . import folders, history, paths, plan as plans, proof, settings as setting
from .firestore import Firestore
from .log import Log
from .night import UNPROVABLE, Night
from .settings import on_a_platform
from .statuses import USAGE, Failure, status_of
from .transport import FirestoreError
from .zone import new_york

USAGE_TEXT = f"""Usage: rankings-night COMMAND [--config FILE | --environment] [OPTION...]

  run [-- --max-drop N]   the night now (rankings.service): with RANKINGS_FIRESTORE_PROJECT fetch,
                          aggregate every board, prove, publish; else the boards from RANKINGS_EXPORTS
                          (`-- --max-drop 100` accepts a drop once)
  cron                    hourly (/etc/cron.d/rankings): the night once a day, in New York's first hour,
                          unless rankings.timer is active
  status [-n N] [--json]  the last N nights (default 7), step by step
  plan                    what tonight will do and why: the fetch, the proof's indexes and its time
  settings                the settings as the night reads them, or the first it refuses (78)
  --config FILE           the configuration (default {paths.CONFIG})
  --environment           the settings from the environment (a container's RANKINGS_* variables)

Exit status: 0 done; 64 usage; 65 data; 69 Firestore unavailable or a night not proven whole; 73 a file
it cannot create; 75 another night running; 78 a setting refused; a failed job's own status; 128 + N
stopped by signal N. See rankings(1), "The night".
"""


def parse(argv):
    """(command, options); `max_drop` from `run -- --max-drop N`, the one flag the night takes."""
    command, rest = (argv or ["help"])[0], argv[1:]
    rest, after = (rest[:rest.index("--")], rest[rest.index("--") + 1:]) if "--" in rest else (rest, [])
    if command in ("-h", "--help", "help") or "-h" in rest or "--help" in rest:
        return "help", {}
    if command not in ("run", "cron", "status", "plan", "settings"):
        raise Failure(USAGE, f"unknown command {command!r} (rankings-night --help)")
    options = {"config": None, "environment": False, "count": 7, "json": False, "max_drop": None}
    while rest:
        word = rest.pop(0)
        if word in ("--config", "--environment") or word.startswith("--config="):
            if options["config"] is not None or options["environment"] or (word == "--config" and not rest):
                raise Failure(USAGE, f"{command}: --config FILE or --environment, once")
            options["environment"] = word == "--environment"
            options["config"] = None if options["environment"] else rest.pop(0) if word == "--config" else word[9:]
        elif word == "--json" and command == "status":
            options["json"] = True
        elif word == "-n" and rest and rest[0].isdigit() and command == "status":
            options["count"] = int(rest.pop(0))
        else:
            raise Failure(USAGE, f"{command}: unknown argument {word!r} (rankings-night --help)")
    drop = re.fullmatch(r"--max-drop[= ](\S+)", " ".join(after))
    if after and (command != "run" or not drop):
        raise Failure(USAGE, f"{command}: after -- only `--max-drop N` (rankings-night run -- --max-drop 100)")
    try:
        options["max_drop"] = drop and setting.percent(drop[1])
    except ValueError as problem:
        raise Failure(USAGE, f"--max-drop {drop[1]}: {problem}") from None
    return command, options


def another_task(environ):
    """Why this task runs no night: of several a platform started, only task 0 runs one."""
    count, index = environ.get("CLOUD_RUN_TASK_COUNT", "1"), environ.get("CLOUD_RUN_TASK_INDEX", "0")
    if count.isdigit() and int(count) > 1 and index.isdigit() and int(index) != 0:
        return f"task {index} of {count} (CLOUD_RUN_TASK_INDEX, CLOUD_RUN_TASK_COUNT): only task 0 runs the night"
    return None


def timer_active(systemd="/run/systemd/system"):
    """systemd is the init and rankings.timer is active (one enabled but not running runs no night)."""
    try:
        return os.path.isdir(systemd) and subprocess.run(
            ["systemctl", "is-active", "--quiet", "rankings.timer"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def cron(settings, log, environ):
    """Debian's cron ignores CRON_TZ: the entry fires hourly, and the night goes ahead in New York's first hour,
    once that day. A night that says it started later than now ran on a clock set ahead: it does not count. After
    a clock set back, a second night that day is harmless (its boards are proven, its publish guarded)."""
    now = time.time()
    if new_york(now).hour != 0:
        return 0
    if timer_active():
        log("rankings.timer is active, so systemd runs the night; nothing to do")
        return 0
    today = new_york(now).date()
    for night in history.read(settings.state_directory)[0]:     # its notes the night says, keeping the file aside
        if night["scheduler"] == "cron" and night["started"] <= now and new_york(night["started"]).date() == today:
            return 0
    return Night(settings, log, "cron", None, environ).run()


def show_plan(settings):
    """What tonight will do, and whether its boards can be proven: (text, status)."""
    if not settings.firestore_project:
        return f"no RANKINGS_FIRESTORE_PROJECT: the boards are made from RANKINGS_EXPORTS ({settings.exports})", 0
    lines, quiet = plans.describe(paths.fetched(settings.state_directory), time.time_ns()), lambda *_: None
    try:
        missing, seconds = proof.probe(Firestore.from_settings(settings, quiet), settings.monthly, quiet)
    except (Failure, FirestoreError) as failure:
        return "\n".join(lines + [f"the proof: cannot ask Firestore for its indexes: {failure}"]), status_of(failure)
    if missing:     # the night then reads everything, whatever the last night allows
        lines = ["tonight's fetch: full", f"why: {UNPROVABLE}"]
    lines += [f"the proof: Firestore lacks an index it needs, so every night reads the whole collection and is "
              f"published unproven until it is made: {command}" for command in missing] \
        or ["the proof: every index it needs exists"]
    stats = [paths.stats(settings.state_directory, r) for r in settings.roles]
    counts = sum(map(proof.counts, stats)) if all(map(os.path.isfile, stats)) else None
    rate = f" at {seconds * 1000:.0f} ms a COUNT, {proof.WORKERS} at once" if seconds else ""
    took = f"{counts * (seconds or 0) / proof.WORKERS:.0f} s" if counts is not None else ""
    lines.append(f"the proof: {counts} COUNTs for last night's boards, about {took}{rate}; a try may take "
                 f"{proof.limit(counts):.0f} s" if counts is not None else
                 f"the proof: 2 COUNTs a joke and 2 a board{rate}; the first night says how many")
    return "\n".join(lines), 0


def main(argv, environ=None):
    environ = dict(os.environ if environ is None else environ)
    form = environ.get("RANKINGS_LOG_FORMAT") if "--environment" in argv else "plain"    # a container's refusal too
    log = Log(form=form if form in ("plain", "json") else "json" if on_a_platform(environ) else "plain")
    try:
        command, options = parse(argv)
        if command == "help":
            print(USAGE_TEXT, end="")
            return 0
        settings = setting.from_environment(environ) if options["environment"] else \
            setting.read_file(options["config"] or paths.CONFIG)
        log = Log(form=settings.log_format, syslog_ident="rankings" if command == "cron" else None)
        if command in ("run", "cron") and (why := another_task(environ)):
            log(why + "; nothing to do")
            return 0
        if command == "run":
            scheduler = "container" if on_a_platform(environ) else "systemd" if "INVOCATION_ID" in environ else "hand"
            return Night(settings, log, scheduler, options["max_drop"], environ).run()
        if command == "cron":
            return cron(settings, log, environ)
        if settings.notes:
            log.warning(settings.notes)
        status, state = 0, settings.state_directory
        if command == "status":
            (nights, notes), fetched = history.read(state), paths.fetched(state)
            for note in notes:
                log.warning(note)
            held = (*folders.held(fetched), fetched) if os.path.isdir(fetched) else None
            text = json.dumps(history.last(nights, options["count"]), indent=1) if options["json"] \
                else history.show(nights, options["count"], held)
        elif command == "plan":
            text, status = show_plan(settings)
        else:
            text = "\n".join(f"{name}={quoted(settings.given.get(name) or default)}    # "
                             f"{settings.where.get(name, 'default')}" for name, (_, default) in setting.TABLE.items())
        if text:
            print(text)
        return status
    except Failure as failure:
        log.error(str(failure), status=failure.status)
        if argv[:1] == ["cron"] and not log.syslog:     # cron mails standard error to nobody reading
            Log(syslog_ident="rankings").error(str(failure))
        return failure.status
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # noqa: BLE001 (a bug: one line, the status the docs give bugs)
        print(f"rankings-night: error: unexpected {type(error).__name__}: {error} (a bug in rankings-night)",
              file=sys.stderr, flush=True)
        return 70


def quoted(text):
    return f'"{text}"' if " " in text or "(" in text else text
