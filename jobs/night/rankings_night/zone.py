"""New York's clocks, where the night's day begins (the cloud function ran at its midnight)."""
import datetime


def zone(name="America/New_York"):
    """seconds -> an aware datetime on New York's clocks (the machine's, without tzdata)."""
    try:
        import zoneinfo
        tz = zoneinfo.ZoneInfo(name)
    except Exception:  # noqa: BLE001 (no tzdata)
        tz = None
    return lambda seconds: datetime.datetime.fromtimestamp(seconds, tz).astimezone(tz)
