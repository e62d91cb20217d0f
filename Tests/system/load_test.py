#!/usr/bin/env python3
"""Load test: many clients at once on loopback, no 5xx and no lost write.

Starts the real `snippetbox` binary on a fresh data folder; 16 clients (each logged in for itself
when the app has a login) mix reads (the list, snippet pages, raw code, images), searches
(`/snippets?q=word`), creates (some with PNG images, a few over the 128 KB external-storage
threshold) and edits of their own snippets for 60 seconds. A client that reads back its own snippet
expects exactly what it last wrote. Afterwards every acknowledged create and edit is read back and
compared, and a sample is looked up by a word only its title holds. Prints counts, rates and latency
percentiles per kind of request. Fails on any 5xx, any unexpected answer or dropped connection, and
any lost or wrong write. A 409 to an edit (a stale version) counts as a correct refusal.

    python3 Tests/system/load_test.py [--duration 60] [--clients 16] [--binary PATH] [--seed N] [--keep]
"""

import argparse
import random
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sbsystem import (EXTERNAL_THRESHOLD, LANGUAGES, WORDS, Client, Server, build_binary, code_text,  # noqa: E402
                      describe_difference, hidden_input, image_of_about, log, matches, new_password, percentile,
                      read_snippet, remove_folder, snippet_fields, snippet_files, uuid_from_location)

MIX = (("list", 12), ("page", 18), ("raw", 14), ("image", 6), ("search", 20), ("create", 14), ("edit", 16))


class Shared:
    def __init__(self):
        self.lock = threading.Lock()
        self.snippets = {}  # id -> last acknowledged state
        self.ids = []
        self.latencies = defaultdict(list)
        self.statuses = defaultdict(lambda: defaultdict(int))
        self.failures = []
        self.refused = 0

    def record(self, kind, status, seconds):
        with self.lock:
            self.latencies[kind].append(seconds)
            self.statuses[kind][status] += 1

    def fail(self, message):
        with self.lock:
            self.failures.append(message)
            shown = len(self.failures) <= 20
        if shown:
            log(f"  FAIL: {message}")


def new_state(rng, label, previous_image=None):
    token = "zq" + uuid.uuid4().hex[:10]  # a word only this version's title holds, for the search check
    size = rng.random()
    if size < 0.55:
        image = previous_image
    elif size < 0.85:
        image = image_of_about(rng.randint(200, 20_000), rng)
    elif size < 0.95:
        image = image_of_about(rng.randint(20_000, 100_000), rng)
    else:
        image = image_of_about(rng.randint(EXTERNAL_THRESHOLD + 8_000, 300_000), rng)
    return {
        "title": f"{rng.choice(WORDS)} {rng.choice(WORDS)} {token} ({label})",
        "token": token,
        "language": rng.choice(LANGUAGES),
        "code": code_text(rng, label),
        "notes": f"*{rng.choice(WORDS)}* notes for {label}",
        "tags": rng.choice(("", "load", "load, system-test", rng.choice(WORDS))),
        "image": image,
    }


def client_loop(index, port, password, deadline, shared, seed, ready):
    rng = random.Random(f"{seed}-{index}")
    client = Client(port)
    try:
        client.login(password)
    except Exception as error:  # noqa: BLE001
        shared.fail(f"client {index} could not log in: {error}")
        ready.abort()
        return
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        return
    own = []
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    n = 0
    while time.monotonic() < deadline.value:
        kind = rng.choices(kinds, weights)[0]
        if kind in ("page", "raw", "image") and not shared.ids:
            kind = "list"
        if kind == "edit" and not own:
            kind = "create"
        n += 1
        label = f"c{index}-{n}"
        try:
            one_request(kind, client, rng, shared, own, label)
        except Exception as error:  # noqa: BLE001 - a dropped connection or an unreadable answer
            shared.record(kind, "no answer", 0.0)
            shared.fail(f"client {index}: {kind} got no answer: {error!r}")
            time.sleep(0.2)


def expect(shared, kind, what, answer, allowed):
    shared.record(kind, answer.status, answer.seconds)
    if answer.status in allowed:
        return True
    shared.fail(f"{what} answered {answer.status} ({'server error' if answer.status >= 500 else 'unexpected'}): "
                f"{answer.error_summary(200)}")
    return False


def one_request(kind, client, rng, shared, own, label):
    if kind == "list":
        expect(shared, kind, "GET /snippets", client.get("/snippets"), (200,))
    elif kind == "search":
        words = " ".join(rng.choice(WORDS) for _ in range(rng.choice((1, 1, 1, 2))))
        path = "/snippets?" + urllib.parse.urlencode({"q": words})
        expect(shared, kind, f"GET {path}", client.get(path), (200,))
    elif kind in ("page", "raw", "image"):
        mine = own and rng.random() < 0.5
        with shared.lock:
            snippet_id = rng.choice(own) if mine else rng.choice(shared.ids)
            state = shared.snippets[snippet_id] if mine else None
        suffix = {"page": "", "raw": "/raw", "image": "/image"}[kind]
        path = f"/snippets/{snippet_id}{suffix}"
        answer = client.get(path)
        if not expect(shared, kind, f"GET {path}", answer, (200, 404) if kind == "image" else (200,)):
            return
        if state is None:
            return
        # Read your own writes: nobody else edits this client's snippets.
        if kind == "raw" and answer.body.decode("utf-8", errors="replace") != state["code"]:
            shared.fail(f"GET {path}: the code is not what this client last saved")
        if kind == "image" and (answer.body if answer.status == 200 else None) != state["image"]:
            shared.fail(f"GET {path}: the image is not what this client last saved")
    elif kind == "create":
        state = new_state(rng, label)
        answer = client.post_multipart("/snippets", snippet_fields(state), snippet_files(state["image"]))
        if not expect(shared, kind, "POST /snippets", answer, (303,)):
            return
        snippet_id = uuid_from_location(answer.header("location"))
        if snippet_id is None:
            shared.fail(f"POST /snippets redirected to {answer.header('location')!r}, which names no snippet")
            return
        with shared.lock:
            if snippet_id in shared.snippets:
                shared.failures.append(f"POST /snippets answered with an existing id {snippet_id}")
            shared.snippets[snippet_id] = state
            shared.ids.append(snippet_id)
        own.append(snippet_id)
    elif kind == "edit":
        snippet_id = rng.choice(own)
        form = client.get(f"/snippets/{snippet_id}/edit")
        if not expect(shared, "edit form", f"GET /snippets/{snippet_id}/edit", form, (200,)):
            return
        version = hidden_input(form.text, "version")
        with shared.lock:
            previous = shared.snippets[snippet_id]
        state = new_state(rng, label, previous["image"])
        fields = snippet_fields(state, version)
        if previous["image"] is not None and rng.random() < 0.1:
            state["image"] = None
            fields.append(("removeImage", "1"))
        upload = state["image"] if state["image"] is not previous["image"] else None
        answer = client.post_multipart(f"/snippets/{snippet_id}", fields, snippet_files(upload))
        if answer.status == 409:
            shared.record(kind, 409, answer.seconds)
            with shared.lock:
                shared.refused += 1
            return
        if not expect(shared, kind, f"POST /snippets/{snippet_id}", answer, (303,)):
            return
        if uuid_from_location(answer.header("location")) != snippet_id.upper():
            shared.fail(f"POST /snippets/{snippet_id} redirected to {answer.header('location')!r}")
            return
        with shared.lock:
            shared.snippets[snippet_id] = state


def verify(port, password, shared, readers=6, search_sample=40, rng=None):
    """Reads every acknowledged write back, and looks a sample up by its title's unique word."""
    with shared.lock:
        queue = list(shared.snippets)
    sample = set((rng or random).sample(queue, min(search_sample, len(queue))))
    queue_lock = threading.Lock()
    counts = {"checked": 0, "searched": 0}

    def reader(n):
        client = Client(port)
        try:
            client.login(password)
        except Exception as error:  # noqa: BLE001
            shared.fail(f"verifier {n} could not log in: {error}")
            return
        while True:
            with queue_lock:
                if not queue:
                    return
                snippet_id = queue.pop()
            expected = shared.snippets[snippet_id]
            try:
                found = read_snippet(client, snippet_id)
            except LookupError as error:
                shared.fail(f"acknowledged snippet {snippet_id} is not readable: {error}")
                continue
            if not matches(found, expected):
                shared.fail(f"snippet {snippet_id} does not hold its last acknowledged version: "
                            f"{describe_difference(found, expected)}")
            if snippet_id in sample:
                path = "/snippets?" + urllib.parse.urlencode({"q": expected["token"]})
                answer = client.get(path)
                if answer.status != 200 or snippet_id.lower() not in answer.text.lower():
                    shared.fail(f"GET {path} ({answer.status}) does not list {snippet_id}, whose title holds "
                                f"{expected['token']!r}")
            with queue_lock:
                counts["checked"] += 1
                counts["searched"] += snippet_id in sample

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counts


def report(shared, seconds):
    log(f"{'kind':<10} {'requests':>8} {'per s':>7} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}  answers")
    total = 0
    for kind in [k for k, _ in MIX] + ["edit form"]:
        values = sorted(shared.latencies.get(kind, []))
        if not values:
            continue
        total += len(values)
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(shared.statuses[kind].items(),
                                                                             key=lambda item: str(item[0])))
        log(f"{kind:<10} {len(values):>8} {len(values) / seconds:>7.1f} {percentile(values, 0.5) * 1000:>8.1f} "
            f"{percentile(values, 0.9) * 1000:>8.1f} {percentile(values, 0.99) * 1000:>8.1f} "
            f"{values[-1] * 1000:>8.1f}  {statuses}")
    log(f"{'all':<10} {total:>8} {total / seconds:>7.1f}")


class Deadline:
    value = 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60, help="seconds of load (default 60)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--binary", help="a built snippetbox binary (default: swift build --product snippetbox)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the data folder and server log")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(10**9)
    started = time.monotonic()

    work = Path(tempfile.mkdtemp(prefix="snippetbox-load-"))
    log(f"load test: {args.clients} clients for {args.duration:g} s, seed {seed}, folder {work}")
    binary = build_binary(args.binary, copy_to=work)
    password = new_password()
    server = Server(binary, work / "data", work, password, name="server")
    shared = Shared()
    stop_status = None
    try:
        server.start()
        log(f"  server up on port {server.port}")
        deadline = Deadline()
        ready = threading.Barrier(args.clients + 1)
        threads = [threading.Thread(target=client_loop, daemon=True,
                                    args=(i, server.port, password, deadline, shared, seed, ready))
                   for i in range(args.clients)]
        deadline.value = time.monotonic() + 3600
        for t in threads:
            t.start()
        ready.wait(timeout=120)
        load_started = time.monotonic()
        deadline.value = load_started + args.duration
        for t in threads:
            t.join(timeout=args.duration + 180)
            if t.is_alive():
                shared.fail("a client was still busy 3 minutes after the end of the load")
        load_seconds = time.monotonic() - load_started
        if not server.alive():
            shared.fail(f"the server died during the load (status {server.process.returncode}):\n" + server.log_tail())
        report(shared, load_seconds)
        log(f"edits refused as stale (409): {shared.refused}")
        verify_started = time.monotonic()
        counts = verify(server.port, password, shared, rng=random.Random(seed))
        log(f"read back {counts['checked']} acknowledged snippets (and searched {counts['searched']} of them by a "
            f"word of their title) in {time.monotonic() - verify_started:.1f} s")
        stop_status = server.stop()
        if stop_status != 0:
            shared.fail(f"the server exited with status {stop_status} after SIGTERM:\n" + server.log_tail())
    except Exception as error:  # noqa: BLE001
        shared.fail(f"the test could not go on: {error!r}")
        if server.log_path:
            log(server.log_tail())
    finally:
        server.kill()

    errors = server.error_lines()
    if errors:
        log(f"the server logged {len(errors)} warnings and errors; the most frequent:")
        for count, line in server.error_summary():
            log(f"    | {count} × {line[:400]}")
    log(f"{time.monotonic() - started:.0f} s in all")
    if shared.failures:
        log(f"load test FAILED: {len(shared.failures)} problems (seed {seed}; data and log kept in {work})")
        return 1
    log("load test passed: no server error, no lost write")
    if args.keep:
        log(f"data and log kept in {work}")
    else:
        remove_folder(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
