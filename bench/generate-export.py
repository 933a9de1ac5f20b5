#!/usr/bin/env python3
"""Write the benchmark's events as a Firestore managed export, laid out as Google's Firestore
emulator writes one (checked by bench/check-export-format.sh, which has the emulator import it).

    bench/generate.py --events 4000000 | bench/generate-export.py OUT_DIR [--per-file N]

Reads generate.py's NDJSON on standard input and writes OUT_DIR/NAME/ with
NAME.overall_export_metadata, all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata
and output-0, output-1, … (N entities each, default 100,000): each a LevelDB log (32 KiB blocks,
7-byte headers, masked CRC-32C) of Datastore EntityProto records, one per event, with the
document id as the key's name, strings as stringValue, the rating as int64Value and the
timestamp as int64 microseconds with meaning GD_WHEN, all as raw (unindexed) properties.
"""

import argparse
import json
import os
import sys

try:
    from google_crc32c import extend as _crc_extend  # C speed when the package is there

    def crc32c(data):
        return _crc_extend(0, data)
except ImportError:
    _TABLE = []
    for _b in range(256):
        _c = _b
        for _ in range(8):
            _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
        _TABLE.append(_c)

    def crc32c(data):
        c = 0xFFFFFFFF
        for b in data:
            c = (c >> 8) ^ _TABLE[(c ^ b) & 0xFF]
        return c ^ 0xFFFFFFFF

BLOCK = 32768
HEADER = 7
PROJECT = "bench"


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_bytes(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def field_varint(number, value):
    return varint(number << 3) + varint(value & 0xFFFFFFFFFFFFFFFF)


def element(kind, name):
    return b"\x0b" + field_bytes(2, kind) + field_bytes(4, name) + b"\x0c"


APP = field_bytes(13, ("dev~" + PROJECT).encode())
KIND = b"rating_events"


def prop(name, value, meaning=0):
    body = (field_varint(1, meaning) if meaning else b"") + field_bytes(3, name) + field_varint(4, 0) + field_bytes(5, value)
    return field_bytes(15, body)


def entity(event):
    path = element(KIND, event["id"].encode())
    out = field_bytes(13, APP + field_bytes(14, path))
    out += prop(b"joke_id", field_bytes(3, event["joke_id"].encode()))
    stamp = event["timestamp"]
    micros = stamp["_seconds"] * 1_000_000 + stamp["_nanoseconds"] // 1000
    out += prop(b"timestamp", field_varint(1, micros), meaning=7)
    out += prop(b"week_id", field_bytes(3, event["week_id"].encode()))
    out += prop(b"device_id", field_bytes(3, event["device_id"].encode()))
    rating = event["rating"]
    if isinstance(rating, float):
        import struct
        out += prop(b"rating", b"\x21" + struct.pack("<d", rating))
    else:
        out += prop(b"rating", field_varint(1, rating))
    return out + field_bytes(16, path)


class LogWriter:
    """LevelDB's log writer: records cut at block edges into FIRST/MIDDLE/LAST, zero trailers."""

    def __init__(self, path):
        self.file = open(path, "wb")
        self.offset = 0
        self.pending = []

    def fragment(self, kind, data):
        crc = crc32c(bytes([kind]) + data)
        masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
        self.pending.append(masked.to_bytes(4, "little") + len(data).to_bytes(2, "little") + bytes([kind]) + data)
        self.offset += HEADER + len(data)

    def add(self, record):
        first = True
        while True:
            left = BLOCK - self.offset % BLOCK
            if left < HEADER:
                self.pending.append(b"\0" * left)
                self.offset += left
                continue
            piece, record = record[:left - HEADER], record[left - HEADER:]
            kind = (1 if first else 4) if not record else (2 if first else 3)
            self.fragment(kind, piece)
            first = False
            if not record:
                break
        if len(self.pending) > 4096:
            self.flush()

    def flush(self):
        self.file.write(b"".join(self.pending))
        self.pending = []

    def close(self):
        self.flush()
        self.file.close()
        return self.offset


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("--per-file", type=int, default=100_000)
    parser.add_argument("--name", default="firestore_export_bench")
    args = parser.parse_args()

    root = os.path.join(args.output, args.name)
    folder = os.path.join(root, "all_namespaces", "all_kinds")
    os.makedirs(folder, exist_ok=True)
    files, total_bytes, count, writer = [], 0, 0, None
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        if writer is None or count % args.per_file == 0:
            if writer:
                total_bytes += writer.close()
            files.append(f"output-{len(files)}")
            writer = LogWriter(os.path.join(folder, files[-1]))
        writer.add(entity(json.loads(line)))
        count += 1
    if writer:
        total_bytes += writer.close()

    # Backup { backup_info (1) { name (1), start (2), end (3) }, kind_info (2) { kind (1) "", file (2)… } }
    info = field_bytes(1, args.name.encode()) + field_varint(2, 1) + field_varint(3, 2)
    kind_info = field_bytes(1, b"") + b"".join(field_bytes(2, f.encode()) for f in files)
    with open(os.path.join(folder, "all_namespaces_all_kinds.export_metadata"), "wb") as f:
        f.write(field_bytes(1, info) + field_bytes(2, kind_info))
    # A log of two records: the version, then OverallExportMetadata { pointer (1) { spec (1)
    # { kind_type (1) ALL_KINDS, namespace_type (3) ALL_NAMESPACES }, file (2), entities (3), bytes (4) } }
    pointer = field_bytes(1, field_varint(1, 2) + field_varint(3, 3)) \
        + field_bytes(2, b"all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata") \
        + field_varint(3, count) + field_varint(4, total_bytes)
    overall = LogWriter(os.path.join(root, args.name + ".overall_export_metadata"))
    overall.add(b"3")
    overall.add(field_bytes(1, pointer))
    overall.close()
    print(f"generate-export.py: {count} events in {len(files)} files, {total_bytes} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
