"""New York's clocks, where the night's day begins (the cloud function ran at its midnight)."""
import datetime

try:
    import zoneinfo
    NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
except Exception:  # noqa: BLE001 (no tzdata: the machine's clocks)
    NEW_YORK = None


def new_york(seconds):
    """An aware datetime on New York's clocks."""
    return datetime.datetime.fromtimestamp(seconds, NEW_YORK).astimezone(NEW_YORK)
