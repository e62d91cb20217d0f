#!/usr/bin/env python3
"""Crash test: an acknowledged write survives SIGKILL, with exactly the content that was acknowledged.

Rounds of: start the real `snippetbox` binary on one data folder (kept across rounds), log in when
the app has a login, fire concurrent creates and edits with PNG images (some over ObjectGraph's
128 KB external-storage threshold, so they go to files beside the store) from several threads,
SIGKILL the server at a random moment, start it again and read every snippet back. Every write
answered with 303 must be there with the title, code and image that were sent; for a snippet whose
last edit was still in flight at the kill, either the last acknowledged version or that later one
is accepted. Any answer other than 303 to a write is a failure too. After the last round the server
is stopped and `snippetbox check` (or, with a build that lacks it, `sqlite3 PRAGMA integrity_check`
plus a comparison of the external files with the rows) must find every store sound. Exits 0 when
everything held, 1 otherwise; the data folder and the server logs are kept when it fails.

    python3 Tests/system/crash_test.py [--rounds 20] [--threads 6] [--binary PATH] [--seed N] [--keep]
"""

import argparse
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sbsystem import (EXTERNAL_THRESHOLD, LANGUAGES, WORDS, Client, NotLoggedIn, Server, build_binary,  # noqa: E402
                      code_text, describe_difference, hidden_input, image_of_about, log, matches, new_password,
                      read_snippet, remove_folder, snippet_fields, snippet_files, uuid_from_location)

IMAGE_SIZES = (  # (weight, smallest, largest): none, inline in the row, and external files
    (15, 0, 0),
    (25, 200, 2_000),
    (25, 20_000, 100_000),
    (35, EXTERNAL_THRESHOLD + 4_000, 260_000),  # not larger: a debug build parses uploads slowly
)


class Registry:
    """Every snippet whose creation was acknowledged, with the versions sent to it.

    `states[acked:]` are the versions it may hold now: the last acknowledged one and any sent after
    it whose answer never came."""

    def __init__(self):
        self.lock = threading.Lock()
        self.snippets = {}  # id -> {"states": [...], "acked": index}
        self.failures = []

    def fail(self, message):
        with self.lock:
            self.failures.append(message)
        log(f"  FAIL: {message}")


class Round:
    def __init__(self, number, registry, rng_seed, own_ids):
        self.number = number
        self.registry = registry
        self.rng_seed = rng_seed
        self.own_ids = own_ids
        self.killing = threading.Event()
        self.lock = threading.Lock()
        self.counts = {"create": 0, "edit": 0, "external": 0, "in flight": 0, "unacked create": 0}
        self.touched = set()  # snippets created or edited (acknowledged or not) in this round

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def touch(self, snippet_id):
        with self.lock:
            self.touched.add(snippet_id)


def random_image(rng):
    weight = rng.randint(1, sum(w for w, _, _ in IMAGE_SIZES))
    for w, low, high in IMAGE_SIZES:
        weight -= w
        if weight <= 0:
            return image_of_about(rng.randint(low, high), rng) if high else None
    return None


def new_state(rng, label, base=None):
    state = {
        "title": f"[{label}] {rng.choice(WORDS)} {rng.choice(WORDS)} – café & “quotes” <{rng.randint(0, 10**6)}>",
        "language": rng.choice(LANGUAGES),
        "code": code_text(rng, label),
        "notes": f"Notes for {label}: *{rng.choice(WORDS)}*",
        "tags": rng.choice(("", "crash", "crash, system-test")),
        "image": base["image"] if base else None,
    }
    return state


def log_in_clients(port, password, count, registry):
    """`count` clients, each logged in for itself (at once, as logging in takes a while), or None."""
    clients = [Client(port) for _ in range(count)]

    def log_in(n):
        try:
            clients[n].login(password)
        except Exception as error:  # noqa: BLE001 - reported
            registry.fail(f"client {n} could not log in: {error}")
            clients[n] = None

    threads = [threading.Thread(target=log_in, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return None if None in clients else clients


def worker(round_, index, client, barrier):
    """One client: creates snippets and edits its own, until the server dies under it."""
    rng = random.Random(f"{round_.rng_seed}-{round_.number}-{index}")
    registry = round_.registry
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        return
    own = list(round_.own_ids[index])
    made = 0
    while True:
        label = f"r{round_.number}-c{index}-{made}"
        made += 1
        try:
            if own and rng.random() < 0.6:
                if not edit(client, round_, rng, rng.choice(own), label):
                    return
            else:
                new_id = create(client, round_, rng, label)
                if new_id is None:
                    return
                if new_id:
                    own.append(new_id)
        except NotLoggedIn as error:
            registry.fail(f"round {round_.number} client {index}: {error}")
            return
        except Exception as error:  # noqa: BLE001 - a bug in the test or an answer it cannot read
            if round_.killing.is_set():
                return
            registry.fail(f"round {round_.number} client {index}: {error!r}")
            return


def connection_lost(round_, what, error):
    """A request that got no answer: expected once the kill began, a failure before it."""
    if round_.killing.is_set():
        return
    round_.registry.fail(f"round {round_.number}: {what} got no answer while the server was running: {error!r}")


def create(client, round_, rng, label):
    """Returns the new id, "" when the server refused (a failure, reported), None when the connection is gone."""
    state = new_state(rng, label)
    state["image"] = random_image(rng)
    try:
        answer = client.post_multipart("/snippets", snippet_fields(state), snippet_files(state["image"]))
    except Exception as error:  # noqa: BLE001 - any failure to get an answer
        if isinstance(error, NotLoggedIn):
            raise
        round_.count("unacked create")
        connection_lost(round_, "POST /snippets", error)
        return None
    if answer.status != 303:
        round_.registry.fail(f"round {round_.number}: POST /snippets answered {answer.status}, not 303: "
                             f"{answer.error_summary()}")
        return ""
    new_id = uuid_from_location(answer.header("location"))
    if new_id is None:
        round_.registry.fail(f"round {round_.number}: POST /snippets redirected to {answer.header('location')!r}, "
                             "which names no snippet")
        return ""
    with round_.registry.lock:
        if new_id in round_.registry.snippets:
            round_.registry.failures.append(f"round {round_.number}: POST /snippets answered with the id of an "
                                            f"existing snippet, {new_id}")
        round_.registry.snippets[new_id] = {"states": [state], "acked": 0}
    round_.touch(new_id)
    round_.count("create")
    if state["image"] and len(state["image"]) > EXTERNAL_THRESHOLD:
        round_.count("external")
    return new_id


def edit(client, round_, rng, snippet_id, label):
    """Edits one of this client's snippets; False when the connection is gone."""
    registry = round_.registry
    try:
        form = client.get(f"/snippets/{snippet_id}/edit")
    except Exception as error:  # noqa: BLE001
        if isinstance(error, NotLoggedIn):
            raise
        connection_lost(round_, f"GET /snippets/{snippet_id}/edit", error)
        return False
    if form.status != 200:
        registry.fail(f"round {round_.number}: GET /snippets/{snippet_id}/edit answered {form.status}: "
                      f"{form.error_summary()}")
        return True
    version = hidden_input(form.text, "version")
    with registry.lock:
        record = registry.snippets[snippet_id]
        base = record["states"][-1]
    state = new_state(rng, label, base)
    choice = rng.random()
    fields = snippet_fields(state, version)
    if choice < 0.5:
        state["image"] = random_image(rng) or base["image"]
    elif choice < 0.65 and base["image"] is not None:
        state["image"] = None
        fields.append(("removeImage", "1"))
    upload = state["image"] if state["image"] is not base["image"] else None
    with registry.lock:
        record["states"].append(state)  # it may land even if no answer comes back
    round_.touch(snippet_id)
    try:
        answer = client.post_multipart(f"/snippets/{snippet_id}", fields, snippet_files(upload))
    except Exception as error:  # noqa: BLE001
        if isinstance(error, NotLoggedIn):
            raise
        round_.count("in flight")
        connection_lost(round_, f"POST /snippets/{snippet_id}", error)
        return False
    if answer.status != 303:
        with registry.lock:
            record["states"].pop()
        registry.fail(f"round {round_.number}: POST /snippets/{snippet_id} answered {answer.status}, not 303: "
                      f"{answer.error_summary()}")
        return True
    if uuid_from_location(answer.header("location")) != snippet_id.upper():
        with registry.lock:
            record["states"].pop()
        registry.fail(f"round {round_.number}: POST /snippets/{snippet_id} redirected to "
                      f"{answer.header('location')!r}, not to the snippet")
        return True
    with registry.lock:
        record["acked"] = len(record["states"]) - 1
    round_.count("edit")
    if upload and len(upload) > EXTERNAL_THRESHOLD:
        round_.count("external")
    return True


def verify(clients, registry, full=None):
    """Reads every registered snippet back (code and image; the title too on its page for those in
    `full`, or for all when `full` is None) with the clients; returns how many were read."""
    with registry.lock:
        ids = sorted(registry.snippets)
    queue = list(ids)
    queue_lock = threading.Lock()

    def reader(client):
        while True:
            with queue_lock:
                if not queue:
                    return
                snippet_id = queue.pop()
            record = registry.snippets[snippet_id]
            candidates = record["states"][record["acked"]:]
            try:
                found = read_snippet(client, snippet_id, with_title=full is None or snippet_id in full)
            except LookupError as error:
                registry.fail(f"acknowledged snippet {snippet_id} ({candidates[0]['title']!r}) is not readable "
                              f"after the restart: {error}")
                continue
            except Exception as error:  # noqa: BLE001
                registry.fail(f"reading {snippet_id} after the restart failed: {error!r}")
                continue
            landed = next((c for c in reversed(candidates) if matches(found, c)), None)
            if landed is None:
                registry.fail(f"snippet {snippet_id} does not hold its last acknowledged version "
                              f"({candidates[0]['title']!r}) nor a later one: "
                              f"{describe_difference(found, candidates[0])}")
                continue
            with registry.lock:
                record["states"] = [landed]
                record["acked"] = 0

    threads = [threading.Thread(target=reader, args=(client,)) for client in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(ids)


def check_store(server):
    """`snippetbox check` on the stopped server's data folder, or a fallback while the app lacks it."""
    status, output = server.run_command("check")
    lowered = output.lower()
    if status != 0 and ("unknown command" in lowered or (status == 2 and "usage" in lowered)):
        log(f"  `snippetbox check` is not there yet (status {status}: {output.strip().splitlines()[-1]!r});")
        log("  falling back to `sqlite3 snippetbox.store \"PRAGMA integrity_check\"` and a look at the external files")
        return fallback_check(server.data_dir)
    log("  $ snippetbox check")
    for line in output.strip().splitlines():
        log(f"    | {line}")
    if status != 0:
        return [f"`snippetbox check` exited with status {status}"]
    return []


def fallback_check(data_dir):
    """SQLite's integrity check on every store in the data folder, and its external files compared
    with the rows that name them (the image column, the only external-storage attribute)."""
    problems = []
    stores = sorted(data_dir.glob("*.store"))
    if not stores:
        return [f"no store file in {data_dir}"]
    for store in stores:
        problems += check_one_store(store)
    return problems


def check_one_store(store):
    problems = []
    done = subprocess.run(["sqlite3", str(store), "PRAGMA integrity_check"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    log(f"    | {store.name}: sqlite3 PRAGMA integrity_check: {done.stdout.strip()}")
    if done.returncode != 0 or done.stdout.strip() != "ok":
        problems.append(f"{store.name}: PRAGMA integrity_check did not answer ok: {done.stdout.strip()[:500]}")
    external = store.parent / (store.name + ".external")
    present = {p.name for p in external.iterdir()} if external.is_dir() else set()
    referenced = set()
    database = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        for (table,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = [row[1] for row in database.execute(f'PRAGMA table_info("{table}")')]
            if "imageData" in columns:
                referenced |= {row[0] for row in database.execute(
                    f'SELECT imageData FROM "{table}" WHERE typeof(imageData) = \'text\'')}
    finally:
        database.close()
    missing = referenced - present
    unreferenced = present - referenced
    # ObjectGraph names its files with UUIDs; leftover_files() reports the others.
    orphaned = {name for name in unreferenced if is_uuid(name)}
    log(f"    | {store.name}: external files: {len(present)} present, {len(referenced)} referenced, "
        f"{len(missing)} missing, {len(orphaned)} orphaned")
    if missing:
        problems.append(f"{store.name}: {len(missing)} external files referenced by rows are missing: "
                        f"{sorted(missing)[:5]}")
    if orphaned:
        problems.append(f"{store.name}: {len(orphaned)} external files no row refers to (written by saves that "
                        f"were killed before they committed, and never swept): {sorted(orphaned)[:5]}")
    return problems


def leftover_files(data_dir):
    """Files in the external folders that are not ObjectGraph's (not named by a UUID): temporary
    files of writes killed before their rename. Neither ObjectGraph's sweep nor `snippetbox check`
    looks at them, so they are reported as a warning, not counted as a failure."""
    found = []
    for folder in sorted(data_dir.glob("*.store.external")):
        for path in sorted(folder.iterdir()):
            # ObjectGraph's lock file, held by every open store to tell its sweep whether it may run.
            if not is_uuid(path.name) and path.name != ".in-use.lock":
                found.append(f"{folder.name}/{path.name} ({path.stat().st_size} bytes)")
    return found


def is_uuid(name):
    try:
        uuid.UUID(name)
        return True
    except ValueError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--threads", type=int, default=6, help="concurrent writing clients")
    parser.add_argument("--binary", help="a built snippetbox binary (default: swift build --product snippetbox)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the data folder and server logs")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(10**9)
    rng = random.Random(seed)
    started = time.monotonic()

    work = Path(tempfile.mkdtemp(prefix="snippetbox-crash-"))
    data_dir = work / "data"
    log(f"crash test: {args.rounds} rounds, {args.threads} clients, seed {seed}, folder {work}")
    binary = build_binary(args.binary, copy_to=work)
    password = new_password()
    server = Server(binary, data_dir, work, password, name="server")
    registry = Registry()
    totals = {"create": 0, "edit": 0, "external": 0, "in flight": 0, "unacked create": 0}
    check_problems = []
    try:
        boot = server.start()
        log(f"  server up in {boot:.1f} s on port {server.port}")
        # Sessions live in the server's memory: after each start the clients log in again, and the
        # same clients read everything back and then write in the next round.
        clients = log_in_clients(server.port, password, args.threads, registry)
        for number in range(1, args.rounds + 1):
            if clients is None:
                raise RuntimeError("the clients could not log in")
            with registry.lock:
                ids = sorted(registry.snippets)
            rng.shuffle(ids)
            own_ids = [ids[i::args.threads] for i in range(args.threads)]
            round_ = Round(number, registry, seed, own_ids)
            barrier = threading.Barrier(args.threads + 1)
            threads = [threading.Thread(target=worker, args=(round_, i, clients[i], barrier), daemon=True)
                       for i in range(args.threads)]
            for t in threads:
                t.start()
            try:
                barrier.wait(timeout=120)
            except threading.BrokenBarrierError:
                registry.fail(f"round {number}: the clients did not all start")
            delay = rng.uniform(0.3, 3.0)
            time.sleep(delay)
            round_.killing.set()
            server.kill()
            for t in threads:
                t.join(timeout=60)
                if t.is_alive():
                    registry.fail(f"round {number}: a client was still waiting 60 s after the kill")
            for key, value in round_.counts.items():
                totals[key] += value
            boot = server.start()
            clients = log_in_clients(server.port, password, args.threads, registry)
            if clients is None:
                raise RuntimeError("the clients could not log in after the restart")
            last = number == args.rounds
            checked = verify(clients, registry, full=None if last else round_.touched)
            c = round_.counts
            log(f"round {number:2d}: killed after {delay:.2f} s; acknowledged {c['create']} creates and "
                f"{c['edit']} edits ({c['external']} with images over 128 KB); in flight at the kill: "
                f"{c['in flight']} edits, {c['unacked create']} creates; restarted in {boot:.1f} s; "
                f"read back {checked} snippets ({'all' if last else len(round_.touched)} with their page); "
                f"failures so far: {len(registry.failures)}")
        code = server.stop()
        log(f"stopped the server with SIGTERM (exit status {code}); checking the store")
        check_problems = check_store(server)
        if totals["external"] == 0:
            check_problems.append("no write with an image over 128 KB was acknowledged in any round, so external "
                                  "storage went untested")
        for problem in check_problems:
            log(f"  FAIL: {problem}")
        leftovers = leftover_files(data_dir)
        if leftovers:
            log(f"  WARNING: {len(leftovers)} temporary files of killed writes lie in the external folder, which "
                f"nothing removes (not counted as a failure): {', '.join(leftovers[:5])}")
    except Exception as error:  # noqa: BLE001 - the test fails with the reason
        registry.fail(f"the test could not go on: {error}")
        if server.log_path:
            log(server.log_tail())
    finally:
        server.kill()

    errors = server.error_lines()
    failures = registry.failures + check_problems
    log(f"totals: {totals['create']} creates and {totals['edit']} edits acknowledged, {totals['external']} of them "
        f"with external images; {totals['in flight']} edits and {totals['unacked create']} creates in flight at "
        f"kills; {len(registry.snippets)} snippets checked after every restart; "
        f"{time.monotonic() - started:.0f} s in all")
    if errors:
        log(f"the server logged {len(errors)} warnings and errors; the most frequent:")
        for count, line in server.error_summary():
            log(f"    | {count} × {line[:400]}")
    if failures:
        log(f"crash test FAILED: {len(failures)} problems (seed {seed}; data and logs kept in {work})")
        return 1
    log("crash test passed: every acknowledged write survived SIGKILL intact")
    if args.keep:
        log(f"data and logs kept in {work}")
    else:
        remove_folder(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
