"""The night around `rankings aggregate`: one program (rankings-night) that cron, systemd and a container run,
Python 3's standard library only; each module tested alone."""
