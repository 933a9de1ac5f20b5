"""The night around `rankings aggregate`: fetch from Firestore, aggregate every board, publish.

One program (rankings-night) that cron, systemd and a container all run; each part is a module
that is tested alone: statuses (the exit statuses), settings (the one reader of the settings),
plan (what tonight does, as a pure function), snapshot and record (a night's data and what it
says of itself), transport, auth and firestore (HTTP, the token, Firestore's calls), folders (the
nights under the fetch's directory), fetch and publish (the two Firestore steps), night (the
steps under one policy), history (what `status` shows), metrics, log and files.

Python 3's standard library only: the package depends on python3 and nothing from PyPI.
"""
