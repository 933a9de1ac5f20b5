"""The night around `rankings aggregate`: fetch from Firestore, aggregate every board, prove,
publish. One program (rankings-night) that cron, systemd and a container run; each module is
tested alone. Python 3's standard library only: nothing from PyPI."""
