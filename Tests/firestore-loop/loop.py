"""The nightly loop against Google's Firestore emulator: seed rating_events with Google's client,
fetch it with rankings-fetch-firestore (rest, then export), aggregate, publish the all-time and a
weekly document with rankings-publish-firestore, and read them back with Google's client the way
the app's decoder sees them. Every rest night holds as many documents as Google's client counts at
its readTime. Then the fetch through a proxy that breaks Firestore's answers (faults.py), a token
command printing two lines, and Firestore unreachable: each fails with its status, current stays.
rankings-fetch.prom, after the rest night and the failed fetches, must pass `promtool check metrics`.

    python loop.py RANKINGS        (run by run.sh, inside the client's virtual environment)

Prints one line per check (`ok   ...` or `FAIL ...`, with timings where they are evidence),
then `N passed, M failed`; exits 1 on any failure.
"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, here)
import emulator as emu  # noqa: E402
import faults  # noqa: E402
from checking import check, expect, finish, promtool_samples  # noqa: E402
import nights as nights_script  # noqa: E402

PROJECT = "demo-rankings-loop"
hooks = os.path.join(root, "jobs", "firestore")
rankings = sys.argv[1]



def hook(name, *args, **settings):
    """Runs a shipped hook from the source tree with the environment the units give it; a hook
    still running after 2 minutes is stopped and the check fails."""
    env = dict(os.environ, RANKINGS_FIRESTORE_PROJECT=PROJECT, RANKINGS_BIN=rankings,
               RANKINGS_FIRESTORE_BACKOFF_SECONDS="0.1", **settings)
    started = time.monotonic()
    try:
        done = subprocess.run([os.path.join(hooks, name), *args], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{name} still running after 120 s") from None
    done.seconds = time.monotonic() - started
    return done


def nights(directory):
    return sorted(n for n in os.listdir(directory) if n[:1].isdigit())


work = tempfile.mkdtemp(prefix="rankings-firestore-loop.")
fetched = os.path.join(work, "firestore")
server = emu.Emulator()
state = {}
try:
    server.start()
    db = emu.client(PROJECT, server.address)
    seeded = emu.seed(db, os.path.join(root, "sample-data", "rating_events.ndjson"))
    # The client's own view of the collection: what a complete fetch must hold.
    expected_names = {d.path for d in db.collection("rating_events").list_documents()}
    print(f"# emulator at {server.address}, seeded {seeded} events", flush=True)

    from google.api_core.datetime_helpers import DatetimeWithNanoseconds

    def counted_at_read_time(stderr, lines):
        # The readTime the hook reports, and Google's own count of the collection at that time.
        said = [line for line in stderr.splitlines() if " documents at readTime " in line]
        expect("lines reporting the readTime", len(said), 1)
        read_time = said[0].split(" at readTime ", 1)[1].split(",", 1)[0]
        counted = db.collection("rating_events").count().get(
            read_time=DatetimeWithNanoseconds.from_rfc3339(read_time))[0][0].value
        expect(f"Google's count at readTime {read_time}", counted, lines)

    def fetched_names(folder, stderr=None):
        names, lines, typed = set(), 0, 0
        with open(os.path.join(folder, "rating_events.ndjson"), encoding="utf-8") as text:
            for line in text:
                document = json.loads(line)
                names.add(document["name"].split("/documents/", 1)[1])
                lines += 1
                fields = document["fields"]
                typed += "integerValue" in fields["rating"] and "timestampValue" in fields["timestamp"]
        expect("documents fetched", lines, len(expected_names))
        if names != expected_names:
            raise AssertionError(f"not the client's documents: {len(expected_names - names)} missing "
                                 f"({sorted(expected_names - names)[:3]}), {len(names - expected_names)} extra "
                                 f"({sorted(names - expected_names)[:3]})")
        expect("typed ratings and timestamps", typed, len(expected_names))
        if stderr is not None:
            counted_at_read_time(stderr, lines)
        return names

    # The fetch writes rankings-fetch.prom beside the job's metrics file.
    fetch_metrics = os.path.join(work, "rankings-fetch.prom")

    def rest_fetch():
        done = hook("rankings-fetch-firestore", fetched, FIRESTORE_EMULATOR_HOST=server.address,
                    RANKINGS_FIRESTORE_FETCH="rest", RANKINGS_METRICS=os.path.join(work, "rankings.prom"))
        expect("exit status", done.returncode, 0)
        current = os.readlink(os.path.join(fetched, "current"))
        expect("nights", nights(fetched), [current])
        names = fetched_names(os.path.join(fetched, "current"), done.stderr)
        state["rest"] = current
        samples = promtool_samples(fetch_metrics)
        expect("rankings-fetch.prom", {k: samples.get(k) for k in ("rankings_fetch_last_run_exit_status",
                                                                   "rankings_fetch_last_run_documents",
                                                                   "rankings_fetch_full", "rankings_fetch_drift_documents")},
               {"rankings_fetch_last_run_exit_status": "0", "rankings_fetch_last_run_documents": str(len(names)),
                "rankings_fetch_full": "1", "rankings_fetch_drift_documents": "0"})
        state["last_success"] = samples.get("rankings_fetch_last_success_timestamp_seconds")
        return f"{len(names)} documents in {done.seconds:.1f}s"
    check("rest: every top-level rating_events document, typed, one per line, in a new night; "
          "promtool accepts its rankings-fetch.prom", rest_fetch)
    # What the failing fetches below must leave exactly as it is: a night and current.
    state["faulted"] = os.path.join(work, "faulted")
    shutil.copytree(fetched, state["faulted"], symlinks=True)

    def rest_fetch_through_faults():
        # Pages 1..6 and the count are requests 1..; the 2nd page fails with 503, the 3rd loses
        # its connection, the 4th is rate limited and then answered by something not HTTP, the
        # 5th is cut short: each retried page must come back exactly once.
        with faults.FaultyProxy(server.address, {2: 503, 4: "drop", 6: 429, 7: "garbage", 9: "truncate"}) as proxy:
            other = os.path.join(work, "through-faults")
            done = hook("rankings-fetch-firestore", other, FIRESTORE_EMULATOR_HOST=proxy.address,
                        RANKINGS_FIRESTORE_FETCH="rest")
            expect(f"exit status ({done.stderr.strip()})", done.returncode, 0)
            expect("requests (5 pages + 1 empty + 5 retried + the count)", proxy.requests, 12)
            retried = done.stderr.count("next in")
            expect("retries reported", retried, 5)
            fetched_names(os.path.join(other, "current"), done.stderr)
        return f"{retried} retried pages"
    check("rest: pages retried after 503, 429, a dropped connection, an answer not HTTP and one cut short "
          "hold every document once", rest_fetch_through_faults)

    def snapshot(directory):
        """Every name under DIR, where each symbolic link points, and every file's bytes."""
        tree = {}
        for parent, folders, files in os.walk(directory):
            for name in folders + files:
                path = os.path.join(parent, name)
                if os.path.islink(path):
                    tree[path] = ("link", os.readlink(path))
                elif os.path.isfile(path):
                    with open(path, "rb") as f:
                        tree[path] = ("file", f.read())
                else:
                    tree[path] = ("folder",)
        return tree

    def refused(injected, status, message, **settings):
        """A fetch through the faulty proxy fails with STATUS and one error line holding MESSAGE;
        DIR (current, every night, every byte) is as it was, no partial folder left behind."""
        directory = state["faulted"]
        before = snapshot(directory)
        with faults.FaultyProxy(server.address, injected) as proxy:
            done = hook("rankings-fetch-firestore", directory, FIRESTORE_EMULATOR_HOST=proxy.address,
                        RANKINGS_FIRESTORE_FETCH="rest", RANKINGS_FIRESTORE_ATTEMPTS="1",
                        # The full read's pages (an incremental night pages its query the same way).
                        RANKINGS_FIRESTORE_INCREMENTAL="no", **settings)
        expect(f"exit status ({done.stderr.strip()})", done.returncode, status)
        last = done.stderr.strip().splitlines()[-1]
        if not last.startswith("rankings-fetch-firestore: error: ") or message not in last:
            raise AssertionError(f"the error line does not say {message!r}: {done.stderr.strip()}")
        if "Traceback" in done.stderr:
            raise AssertionError(f"a traceback: {done.stderr}")
        after = snapshot(directory)
        expect("DIR's names, links and bytes unchanged (no partial left)", sorted(after), sorted(before))
        expect("DIR's links and bytes", after == before, True)
        said = last.split(": error: ", 1)[1]
        return f"{done.seconds:.1f}s: " + (said if len(said) < 100 else f"...{said[-100:]}")

    # Each way Firestore's answer can be incomplete or broken, with one try per call, so that the
    # fault is what the fetch meets: exit 69 and the night refused. (Through retries, a broken
    # answer is tried again: the check above.)
    for fault, request, message in (
            ("error-item", 2, "Firestore stopped the stream at item 501 with an error: injected"),
            ("short", 1, "999 documents fetched, but Firestore counts 5000"),
            ("empty", 1, "the stream holds no readTime (0 items)"),
            ("repeat", 2, "does not come after the document before it (a repeat or a step back)"),
            ("non-object", 1, "item 4 is not an object"),
            ("nameless", 1, "item 4 holds a document without a name"),
            ("truncate", 2, "IncompleteRead"),
            ("garbage", 1, "BadStatusLine"),
    ):
        check(f"rest: {fault} on page {request} fails the night (69): current, the nights and their bytes unchanged",
              lambda f=fault, r=request, m=message: refused({r: f}, 69, m))

    check("rest: an answer trickling a byte every 1.5 s is cut off at the whole-call limit (69), DIR unchanged",
          lambda: refused({1: "trickle"}, 69, "no whole answer within 3s", RANKINGS_FIRESTORE_TIMEOUT_SECONDS="3"))

    def export_fetch():
        time.sleep(1.1)  # nights are named by the second
        done = hook("rankings-fetch-firestore", fetched, FIRESTORE_EMULATOR_HOST=server.address,
                    RANKINGS_FIRESTORE_FETCH="export")
        expect("exit status", done.returncode, 0)
        current = os.readlink(os.path.join(fetched, "current"))
        expect("nights", nights(fetched), sorted([state["rest"], current]))
        tree = os.path.join(fetched, current)
        metadata = [n for n in os.listdir(tree) if n.endswith(".overall_export_metadata")]
        expect("export roots", len(metadata), 1)
        outputs = [os.path.join(p, n) for p, _, files in os.walk(tree) for n in files if n.startswith("output-")]
        if not outputs or not all(os.path.getsize(o) > 0 for o in outputs):
            raise AssertionError(f"no export output files in {tree}")
        state["export"] = current
        return f"managed export in {done.seconds:.1f}s"
    check("export: the emulator's managed export becomes the night's folder, current switched", export_fetch)

    def keeps_the_last_nights():
        time.sleep(1.1)
        done = hook("rankings-fetch-firestore", fetched, FIRESTORE_EMULATOR_HOST=server.address,
                    RANKINGS_FIRESTORE_FETCH="export", RANKINGS_FIRESTORE_KEEP="2")
        expect("exit status", done.returncode, 0)
        current = os.readlink(os.path.join(fetched, "current"))
        expect("nights kept", nights(fetched), sorted([state["export"], current]))
        state["export"] = current
    check("RANKINGS_FIRESTORE_KEEP=2 keeps the two newest nights", keeps_the_last_nights)

    # The documents to publish, from what a rest fetch left: the emulator holds the sample's
    # events, so the job must write the sample's golden documents from Firestore's typed lines.
    for_job = os.path.join(work, "for-job")
    done = hook("rankings-fetch-firestore", for_job, FIRESTORE_EMULATOR_HOST=server.address,
                RANKINGS_FIRESTORE_FETCH="rest")
    expect("rest fetch for the job: exit status", done.returncode, 0)
    counted_at_read_time(done.stderr, len(expected_names))
    events = os.path.join(for_job, "current")
    documents = {
        "all_time": ([], os.path.join(root, "sample-data", "expected", "all_time.json")),
        "2025-W42": (["--week", "2025-W42"], os.path.join(root, "sample-data", "backfill", "week-2025-W42.json")),
    }

    def aggregate_from(source, label):
        for name, (flags, golden) in documents.items():
            out = os.path.join(work, f"{name}.{label}.json")
            done = subprocess.run([rankings, "aggregate", "--computed-at", "2026-02-18T05:00:00Z", *flags,
                                   "--output", out, source], stderr=subprocess.PIPE, text=True)
            expect(f"{label} {name}: exit status ({done.stderr.strip()})", done.returncode, 0)
            with open(out, "rb") as a, open(golden, "rb") as b:
                expect(f"{label} {name}: the golden bytes", a.read() == b.read(), True)
            os.replace(out, os.path.join(work, f"{name}.json"))   # what the publish checks send

    def aggregate():
        aggregate_from(events, "rest")
    check("aggregate writes the all-time and the 2025-W42 documents from the rest fetch's typed lines", aggregate)

    def aggregate_export():
        # The newest night is the emulator's managed export (the KEEP check fetched it last).
        aggregate_from(os.path.join(fetched, "current"), "export")
    check("aggregate writes the same documents from the emulator's managed export", aggregate_export)

    def publish():
        timings = []
        for name in documents:
            done = hook("rankings-publish-firestore", os.path.join(work, f"{name}.json"),
                        FIRESTORE_EMULATOR_HOST=server.address)
            expect(f"{name}: exit status ({done.stderr.strip()})", done.returncode, 0)
            timings.append(f"{name} {done.seconds:.1f}s")
        return ", ".join(timings)
    check("publish writes weekly_rankings/all_time and weekly_rankings/2025-W42", publish)

    def read_back():
        lines = []
        for name, (_, golden) in documents.items():
            with open(golden, encoding="utf-8") as g:
                want = json.load(g)
            got = db.collection("weekly_rankings").document(name).get().to_dict()
            expect(f"{name}: fields", sorted(got), sorted(want))
            for key in ("hilarious", "horrible"):
                expect(f"{name}: {key}", got[key], want[key])
                for entry in got[key]:
                    expect(f"{name}: {key} entry types", [type(entry[k]).__name__ for k in ("joke_id", "count", "rank")],
                           ["str", "int", "int"])
            for key in ("total_hilarious_ratings", "total_horrible_ratings"):
                expect(f"{name}: {key}", (type(got[key]).__name__, got[key]), ("int", want[key]))
            for key in ("computed_at", "week_start", "week_end"):
                if key not in want:
                    continue
                if not isinstance(got[key], datetime.datetime):
                    raise AssertionError(f"{name}: {key} is a {type(got[key]).__name__}, not a Timestamp")
                text = got[key].astimezone(datetime.timezone.utc).isoformat(timespec="milliseconds")
                expect(f"{name}: {key}", text.replace("+00:00", "Z"), want[key] if "." in want[key]
                       else want[key].replace("Z", ".000Z"))
            expect(f"{name}: week_id", got["week_id"], want["week_id"])
            lines.append(f"{name}: " + ", ".join(f"{k}={type(v).__name__}" for k, v in got.items()
                                                if not isinstance(v, list)))
        state["types"] = lines
        return "; ".join(lines)
    check("Google's client reads both back: same lists, integer counts and ranks, Timestamps, no extra field",
          read_back)

    def republish_replaces_whole_document():
        # A field the job does not write, left by some earlier writer, is gone after a publish.
        db.collection("weekly_rankings").document("all_time").update({"stale": True})
        done = hook("rankings-publish-firestore", os.path.join(work, "all_time.json"),
                    FIRESTORE_EMULATOR_HOST=server.address)
        expect("exit status", done.returncode, 0)
        expect("stale field", "stale" in db.collection("weekly_rankings").document("all_time").get().to_dict(), False)
    check("a publish replaces the whole document (one PATCH, no field of the old one survives)",
          republish_replaces_whole_document)

    def publish_a_firestore_body():
        # The hook takes the job's --format firestore output as well as the JSON document, and
        # the app then reads the very same document.
        os.makedirs(os.path.join(work, "body"), exist_ok=True)
        body = os.path.join(work, "body", "all_time.json")
        done = subprocess.run([rankings, "aggregate", "--computed-at", "2026-02-18T05:00:00Z", "--format", "firestore",
                               "--output", body, events], stderr=subprocess.PIPE, text=True)
        expect(f"aggregate --format firestore: exit status ({done.stderr.strip()})", done.returncode, 0)
        stored = db.collection("weekly_rankings").document("all_time")
        from_json = stored.get().to_dict()
        stored.delete()
        done = hook("rankings-publish-firestore", body, FIRESTORE_EMULATOR_HOST=server.address)
        expect(f"exit status ({done.stderr.strip()})", done.returncode, 0)
        expect("the document, as from the JSON form", stored.get().to_dict(), from_json)
    check("a --format firestore body publishes the same document as the JSON form", publish_a_firestore_body)

    def invalid_document_is_not_published():
        bad = os.path.join(work, "all_time.json.bad")
        os.makedirs(os.path.join(work, "bad"), exist_ok=True)
        bad = os.path.join(work, "bad", "all_time.json")
        with open(bad, "w") as out:
            out.write('{"week_id": "all_time", "hilarious": []}\n')
        before = db.collection("weekly_rankings").document("all_time").get().update_time
        done = hook("rankings-publish-firestore", bad, FIRESTORE_EMULATOR_HOST=server.address)
        expect("exit status", done.returncode, 65)
        expect("update time", db.collection("weekly_rankings").document("all_time").get().update_time, before)
    check("an invalid document is refused (65) and Firestore keeps the old one", invalid_document_is_not_published)

    def week_under_another_name_is_not_published():
        # A week's board written as all_time.json would replace the all-time board the app shows.
        os.makedirs(os.path.join(work, "misnamed"), exist_ok=True)
        misnamed = os.path.join(work, "misnamed", "all_time.json")
        shutil.copyfile(os.path.join(work, "2025-W42.json"), misnamed)
        before = db.collection("weekly_rankings").document("all_time").get().update_time
        done = hook("rankings-publish-firestore", misnamed, FIRESTORE_EMULATOR_HOST=server.address)
        expect("exit status", done.returncode, 65)
        expect("message", done.stderr.strip().endswith(
            "its week_id is 2025-W42, but it would be written as weekly_rankings/all_time; name the file "
            "2025-W42.json"), True)
        expect("update time", db.collection("weekly_rankings").document("all_time").get().update_time, before)
        monthly = os.path.join(work, "misnamed", "monthly.json")
        shutil.copyfile(os.path.join(work, "all_time.json"), monthly)
        done = hook("rankings-publish-firestore", monthly, FIRESTORE_EMULATOR_HOST=server.address)
        expect(f"an all-time board as monthly: exit status ({done.stderr.strip()})", done.returncode, 0)
    check("a week's document named all_time.json is refused (65); an all-time one publishes as monthly",
          week_under_another_name_is_not_published)

    def rest_fetch_while_votes_arrive():
        # After the second page has arrived, Google's client writes two new votes (one sorting
        # before the cursor, one after) and deletes one not read yet: the fetch reads every page
        # at the first page's readTime, so it holds the collection as it was, exactly.
        events = db.collection("rating_events")
        ids = sorted(name.split("/", 1)[1] for name in expected_names)
        victim = events.document(ids[-1])
        kept = victim.get().to_dict()
        new = {"joke_id": "j-new", "rating": 5, "device_id": "d-new", "week_id": "2026-W01",
               "timestamp": datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)}

        def write_while_paging():
            events.document("0000-arrived-during-fetch").set(new)
            events.document("zzzz-arrived-during-fetch").set(new)
            victim.delete()
        try:
            with faults.FaultyProxy(server.address, {}, before={3: write_while_paging}) as proxy:
                other = os.path.join(work, "while-voting")
                done = hook("rankings-fetch-firestore", other, FIRESTORE_EMULATOR_HOST=proxy.address,
                            RANKINGS_FIRESTORE_FETCH="rest")
                expect(f"exit status ({done.stderr.strip()})", done.returncode, 0)
                expect("requests (5 pages + 1 empty + the count)", proxy.requests, 7)
                fetched_names(os.path.join(other, "current"), done.stderr)
            now = {d.path for d in events.list_documents()}
            expect("the collection did change meanwhile", len(now - expected_names), 2)
        finally:
            events.document("0000-arrived-during-fetch").delete()
            events.document("zzzz-arrived-during-fetch").delete()
            victim.set(kept)
        return f"{done.stderr.strip().splitlines()[-1]}"
    check("rest: votes written and deleted while paging are neither seen nor missed (one readTime)",
          rest_fetch_while_votes_arrive)

    # Unreachable Firestore: a port nothing listens on.
    unreachable = f"127.0.0.1:{emu.free_port()}"

    def fetch_fails_unreachable():
        before = os.readlink(os.path.join(fetched, "current"))
        listing = sorted(os.listdir(fetched))
        for method in ("rest", "export"):
            done = hook("rankings-fetch-firestore", fetched, FIRESTORE_EMULATOR_HOST=unreachable,
                        RANKINGS_FIRESTORE_FETCH=method, RANKINGS_METRICS=os.path.join(work, "rankings.prom"))
            expect(f"{method}: exit status", done.returncode, 69)
            expect(f"{method}: current", os.readlink(os.path.join(fetched, "current")), before)
            expect(f"{method}: the folder", sorted(os.listdir(fetched)), listing)
            if "gave up after 5 tries" not in done.stderr:
                raise AssertionError(f"{method}: no retries in: {done.stderr}")
            samples = promtool_samples(fetch_metrics)
            expect(f"{method}: rankings-fetch.prom's status", samples.get("rankings_fetch_last_run_exit_status"), "69")
            expect(f"{method}: rankings-fetch.prom's last success (the rest night's)",
                   samples.get("rankings_fetch_last_success_timestamp_seconds"), state.get("last_success"))
    check("unreachable Firestore: both fetch methods fail (69) after retries, current and the nights unchanged, "
          "rankings-fetch.prom says 69, keeps the last success, and promtool accepts it", fetch_fails_unreachable)

    def publish_fails_unreachable():
        done = hook("rankings-publish-firestore", os.path.join(work, "all_time.json"),
                    FIRESTORE_EMULATOR_HOST=unreachable)
        expect("exit status", done.returncode, 69)
    check("unreachable Firestore: publish fails (69)", publish_fails_unreachable)

    def token_through_the_proxy():
        # RANKINGS_FIRESTORE_ENDPOINT makes the proxy the API's address: no emulator setting, so
        # the hook gets a token from its command and sends it, as to Google's.
        with faults.FaultyProxy(server.address, {}) as proxy:
            other = os.path.join(work, "with-token")
            done = hook("rankings-fetch-firestore", other, RANKINGS_FIRESTORE_FETCH="rest", FIRESTORE_EMULATOR_HOST="",
                        RANKINGS_FIRESTORE_ENDPOINT=f"http://{proxy.address}/v1",
                        RANKINGS_FIRESTORE_TOKEN_COMMAND="echo ya29.loop-token")
            expect(f"exit status ({done.stderr.strip()})", done.returncode, 0)
            expect("Authorization headers", set(proxy.authorizations), {"Bearer ya29.loop-token"})
            expect("the token in a message", "loop-token" in done.stderr, False)
            fetched_names(os.path.join(other, "current"), done.stderr)
        return f"{proxy.requests} requests, each with the token"
    check("RANKINGS_FIRESTORE_ENDPOINT: a token from RANKINGS_FIRESTORE_TOKEN_COMMAND is sent on every call, "
          "and shown in no message", token_through_the_proxy)

    def two_line_token():
        with faults.FaultyProxy(server.address, {}) as proxy:
            for name, arg in (("rankings-fetch-firestore", state["faulted"]),
                              ("rankings-publish-firestore", os.path.join(work, "all_time.json"))):
                before = snapshot(state["faulted"])
                done = hook(name, arg, FIRESTORE_EMULATOR_HOST="",
                            RANKINGS_FIRESTORE_ENDPOINT=f"http://{proxy.address}/v1",
                            RANKINGS_FIRESTORE_TOKEN_COMMAND="printf 'ya29.SECRET-token\\nsecond-line\\n'")
                expect(f"{name}: exit status ({done.stderr.strip()})", done.returncode, 78)
                for secret in ("SECRET", "second-line"):
                    if secret in done.stderr:
                        raise AssertionError(f"{name}: {secret} in its messages: {done.stderr}")
                if "no access token" not in done.stderr or "not a single line" not in done.stderr:
                    raise AssertionError(f"{name}: not the refusal: {done.stderr}")
                expect(f"{name}: DIR unchanged", snapshot(state["faulted"]) == before, True)
            expect("requests sent", proxy.requests, 0)
    check("a token command printing two lines: both hooks stop with 78 and show neither line", two_line_token)

    def newline_in_document_name():
        folder = os.path.join(work, "odd-name")
        os.makedirs(folder, exist_ok=True)
        odd = os.path.join(folder, "all\ntime.json")
        shutil.copyfile(os.path.join(work, "all_time.json"), odd)
        done = hook("rankings-publish-firestore", odd, FIRESTORE_EMULATOR_HOST=server.address,
                    RANKINGS_FIRESTORE_COLLECTION="loop_odd_names")
        expect(f"exit status ({done.stderr.strip()})", done.returncode, 0)
        expect("log lines", len(done.stderr.splitlines()), 1)
        if "loop_odd_names/all\\ntime " not in done.stderr:
            raise AssertionError(f"the name not written with its newline escaped: {done.stderr}")
    check("publish: a newline in the document's file name stays inside its one log line", newline_in_document_name)

    def missing_project():
        env = {k: v for k, v in os.environ.items() if k != "RANKINGS_FIRESTORE_PROJECT"}
        for name, arg in (("rankings-fetch-firestore", fetched), ("rankings-publish-firestore", "x.json")):
            done = subprocess.run([os.path.join(hooks, name), arg], env=env, stderr=subprocess.PIPE, text=True)
            expect(f"{name}: exit status", done.returncode, 78)
            expect(f"{name}: message", done.stderr.strip(), f"{name}: error: RANKINGS_FIRESTORE_PROJECT is not set")
    check("without RANKINGS_FIRESTORE_PROJECT both hooks stop with 78", missing_project)

    # Incremental nights (nights.py), on this emulator in a project of their own.
    nights_script.run(server.address)
finally:
    server.stop()
    shutil.rmtree(work, ignore_errors=True)

finish()
