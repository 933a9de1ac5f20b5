"""Where the package put things (jobs/install.sh writes the real paths over the placeholders), and every
name the night derives from its state directory: no other module spells them."""
import os

BINDIR = "@BINDIR@"
SYSCONFDIR = "@SYSCONFDIR@"
CONFIG = f"{SYSCONFDIR}/rankings.conf"
STATE = "/var/lib/rankings"
ROLES = ("all_time", "monthly")


def rankings():
    """The job: the installed one; from a checkout, whose placeholder stays, `rankings` on PATH."""
    return "rankings" if BINDIR.startswith("@") else f"{BINDIR}/rankings"


def board(state, role):
    return os.path.join(state, f"{role}.json")


def report(state, role):
    return os.path.join(state, f".{role}.report.json")


def stats(state, role):
    return os.path.join(state, f".{role}.stats.ndjson")


def fetched(state):
    """The fetched nights: current, NIGHT folders, .partial-* (folders.py)."""
    return os.path.join(state, "firestore")


def lock(state):
    return os.path.join(state, ".rankings.lock")


def history(state):
    return os.path.join(state, ".rankings-nights.json")
