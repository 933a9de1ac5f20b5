"""The tests' own reader of a night's folder, written apart from the product's snapshot.py so that
each checks the other: the record's layers read in order, one JSON document a line, a later
layer's document replacing an earlier one of the same name; and the record's counts and digests
held to the files."""
import hashlib
import json
import os


def record(folder):
    with open(os.path.join(folder, ".night.json"), encoding="utf-8") as text:
        return json.load(text)


def files(folder):
    """The layer files the record names, base first."""
    return [layer["file"] for layer in record(folder)["layers"]]


def documents(folder):
    """The snapshot the folder holds: its documents in name order, later layers winning."""
    held = {}
    for name in files(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as lines:
            for line in lines:
                document = json.loads(line)
                held[document["name"]] = document
    return [held[name] for name in sorted(held)]


def problems(folder):
    """What in the folder differs from its record: [] for a whole night."""
    night, found = record(folder), []
    layers = night["layers"]
    for layer in layers:
        path = os.path.join(folder, layer["file"])
        try:
            with open(path, "rb") as data:
                content = data.read()
        except OSError as error:
            found.append(f"{layer['file']}: {error.strerror}")
            continue
        seen = (content.count(b"\n"), len(content), hashlib.sha256(content).hexdigest())
        wanted = (layer["lines"], layer["bytes"], layer["sha256"])
        if seen != wanted:
            found.append(f"{layer['file']}: {seen}, recorded {wanted}")
        names = [json.loads(line)["name"] for line in content.splitlines()]
        if names != sorted(set(names)):
            found.append(f"{layer['file']}: names not strictly increasing")
    extra = sorted(set(n for n in os.listdir(folder) if n.startswith("rating_events")) - {l["file"] for l in layers})
    if extra:
        found.append(f"files the record does not name: {extra}")
    if len(documents(folder)) != night["snapshot_documents"]:
        found.append(f"{len(documents(folder))} documents, recorded {night['snapshot_documents']}")
    return found
