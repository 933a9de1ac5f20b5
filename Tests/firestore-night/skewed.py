"""python3 skewed.py SECONDS NIGHT ARG...: `NIGHT ARG...` (a rankings-night launcher) with this
process's clock moved by SECONDS, and no other's: time.time, time.time_ns, the clock gmtime,
localtime and strftime read, and datetime's now, utcnow and today; the job the night starts
keeps the machine's."""
import datetime
import os
import sys
import time

offset = float(sys.argv[1])
real_time, real_ns, real_gmtime, real_localtime, real_strftime = \
    time.time, time.time_ns, time.gmtime, time.localtime, time.strftime
time.time = lambda: real_time() + offset
time.time_ns = lambda: real_ns() + int(offset * 10**9)
time.gmtime = lambda seconds=None: real_gmtime(time.time() if seconds is None else seconds)
time.localtime = lambda seconds=None: real_localtime(time.time() if seconds is None else seconds)
time.strftime = lambda form, moment=None: real_strftime(form, time.localtime() if moment is None else moment)


class Moved(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(time.time(), tz)

    @classmethod
    def utcnow(cls):
        return cls.fromtimestamp(time.time(), datetime.timezone.utc).replace(tzinfo=None)

    @classmethod
    def today(cls):
        return cls.fromtimestamp(time.time())


datetime.datetime = Moved
night = sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.realpath(night)))
sys.argv = [night] + sys.argv[3:]
from rankings_night.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
