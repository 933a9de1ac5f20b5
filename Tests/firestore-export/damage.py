"""Damages copies of a real emulator export and holds `rankings aggregate` to the outcome each
damage must have (issue 26): the exact status and message, and the document of a good run
before it left byte for byte as it was. Also checks that the good run read as many entities as
the overall metadata records, and that the emulator's byte count is the sum of the output files'
sizes (real exports need not: the job reports a difference and holds the files to the entity
count instead).

Python 3 standard library only; compare.py calls run() with its own `check`. The metadata and
the logs are read here by hand (a few lines of protobuf and LevelDB log), sharing nothing with
the reader under test. Every run has a time limit, so a reader that blocks fails instead of
hanging the suite.
"""
import glob
import os
import shutil
import subprocess
import tempfile

BLOCK = 32768
LIMIT_SECONDS = 60


def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(buf):
    """(field, wire type, value) of a message's top level: ints for varints, bytes otherwise."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 2:
            length, i = varint(buf, i)
            value, i = buf[i:i + length], i + length
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire} in metadata")
        yield number, wire, value


def encode_varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode(number, wire, value):
    if wire == 0:
        return encode_varint(number << 3) + encode_varint(value)
    return encode_varint(number << 3 | wire) + encode_varint(len(value)) + value


def records(data):
    """(start, end) of each record of a LevelDB log, in order."""
    off, start = 0, None
    while off < len(data):
        left = BLOCK - off % BLOCK
        if left < 7:
            off += left
            continue
        length, kind = data[off + 4] | data[off + 5] << 8, data[off + 6]
        if kind == 0:
            off += left
            continue
        if kind in (1, 2):
            start = off
        off += 7 + length
        if kind in (1, 4):
            yield start, off


def overall_pointers(path):
    """[(kind metadata file, entities, bytes)] of an overall metadata file."""
    data = open(path, "rb").read()
    logged = [data[s:e] for s, e in records(data)]
    # Each record here is one FULL fragment: its payload follows the 7-byte header.
    version, message = logged[0][7:], logged[1][7:]
    assert version == b"3", version
    pointers = []
    for number, _, value in fields(message):
        if number == 1:
            inner = {n: v for n, _, v in fields(value)}
            pointers.append((inner[2].decode(), inner.get(3), inner.get(4)))
    return pointers


def kind_listing(original, files):
    """The kind metadata `original` with its one kind_info's files replaced by `files`."""
    out = b""
    for number, wire, value in fields(original):
        if number == 2:
            info = b"".join(encode(n, w, v) for n, w, v in fields(value) if n != 2)
            value = info + b"".join(encode(2, 2, f.encode()) for f in files)
        out += encode(number, wire, value)
    return out


def run(check, root, rankings, dump_lines):
    overall = glob.glob(os.path.join(root, "*.overall_export_metadata"))[0]
    [(kind_file, entities, recorded_bytes)] = overall_pointers(overall)
    folder = os.path.dirname(os.path.join(root, kind_file))
    outputs = sorted(glob.glob(os.path.join(folder, "output-*")), key=lambda p: int(p.rsplit("-", 1)[1]))
    sizes = [os.path.getsize(p) for p in outputs]
    counts = [sum(1 for _ in records(open(p, "rb").read())) for p in outputs]
    check(f"the metadata records {entities} entities, the records of the {len(outputs)} output files",
          None if entities == sum(counts) else f"the files hold {sum(counts)}")
    check(f"the metadata records {recorded_bytes} bytes, the sum of the output files' sizes",
          None if recorded_bytes == sum(sizes) else f"the files hold {sum(sizes)}")
    check(f"the export read equals the metadata's entity count ({entities})",
          None if dump_lines == entities else f"{dump_lines} records read")

    work = tempfile.mkdtemp()
    try:
        document = os.path.join(work, "all_time.json")
        command = [rankings, "aggregate", "-q", "--max-invalid", "100", "--allow-empty", "-o", document]
        good = subprocess.run(command + [root], capture_output=True, timeout=LIMIT_SECONDS)
        check("the undamaged export: status 0", None if good.returncode == 0 else f"{good.returncode}: {good.stderr!r}")
        before = open(document, "rb").read()

        def case(name, damage, status, message, note=None):
            copy = os.path.join(work, "export")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root, copy)
            paths = {"overall": os.path.join(copy, os.path.basename(overall)),
                     "kind": os.path.join(copy, kind_file),
                     "outputs": [os.path.join(copy, os.path.relpath(p, root)) for p in outputs]}
            damage(paths)
            expected = (f"rankings: note: {note(paths)}\n" if note else "") + "rankings: error: " + message(paths) + "\n"
            try:
                result = subprocess.run(command + [copy], capture_output=True, timeout=LIMIT_SECONDS)
            except subprocess.TimeoutExpired:
                check(name, f"still running after {LIMIT_SECONDS} s")
                return
            problems = []
            if result.returncode != status:
                problems.append(f"status {result.returncode}, not {status}")
            if result.stderr.decode(errors="replace") != expected:
                problems.append(f"stderr {result.stderr!r}, not {expected!r}")
            if open(document, "rb").read() != before:
                problems.append("the document was replaced")
            check(f"{name}: {status}", "; ".join(problems) or None)

        def short(read):
            return lambda p: (f"{p['overall']}: incomplete export: the {len(outputs)} output files {kind_file} lists hold "
                              f"{read} entities, but this metadata records {entities}")

        def bytes_note(total):
            # The recorded byte count is reported, not required (real exports count bytes their own way).
            return lambda p: (f"{p['overall']}: the {len(outputs)} output files {kind_file} lists hold {total} bytes; "
                              f"this metadata records {recorded_bytes} (reported, not checked: the entity count is)")

        def write(path, data):
            with open(path, "wb") as f:
                f.write(data)

        def fifo(key, listed):
            def damage(p):
                path = p[key] if key != "output" else p["outputs"][-1]
                os.remove(path)
                os.mkfifo(path)
            return damage, lambda p: (f"cannot read {p[key] if key != 'output' else p['outputs'][-1]}: "
                                      f"not a regular file{listed(p)}")

        case("output-1 emptied", lambda p: write(p["outputs"][1], b""), 65, short(sum(counts) - counts[1]),
             bytes_note(sum(sizes) - sizes[1]))
        first = open(outputs[0], "rb").read()
        cut = list(records(first))[999][1]
        case("output-0 cut after record 1,000", lambda p: write(p["outputs"][0], first[:cut]), 65,
             short(sum(counts) - counts[0] + 1000), bytes_note(sum(sizes) - sizes[0] + cut))
        names = [os.path.basename(p) for p in outputs]
        kind = open(os.path.join(root, kind_file), "rb").read()
        case("the kind metadata lists output-0 twice", lambda p: write(p["kind"], kind_listing(kind, names + names[:1])), 65,
             lambda p: f"{p['kind']}: incomplete export: output-0 is listed twice")
        # output-1 replaced by a copy of output-0 holds as many entities as the metadata records:
        # with the byte count no longer required, the job reads it (0.4's export method refused it
        # by its proof, a document twice; at 0.5 a managed export is the job's input only, never a
        # night's fetch).
        case("a zero-length kind metadata, with --allow-empty", lambda p: write(p["kind"], b""), 65,
             lambda p: f"{p['kind']}: corrupt export at byte 0: undecodable metadata: no kind described (0 bytes)")
        case("the kind metadata lists ../ outside the export",
             lambda p: write(p["kind"], kind_listing(kind, names[:-1] + ["../../../" + names[-1]])), 65,
             lambda p: f"{p['kind']}: incomplete export: \"../../../{names[-1]}\" is outside the export")
        for key, listed in (("output", lambda p: f" (listed in {p['kind']})"),
                            ("kind", lambda p: f" (listed in {p['overall']})"),
                            ("overall", lambda p: "")):
            damage, message = fifo(key, listed)
            case(f"a FIFO as the {'last output file' if key == 'output' else key + ' metadata'}", damage, 66, message)
    finally:
        shutil.rmtree(work, ignore_errors=True)
