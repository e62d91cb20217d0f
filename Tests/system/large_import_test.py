#!/usr/bin/env python3
"""A large import leaves the server answering everyone else while it is read.

Runs the real binary (built as the other system tests build it) on a fresh data folder, logs in as
the administrator and imports a JSON export of 4,000 snippets (about 10 MB). While the import runs,
probes open new connections one after another and ask for the login page. The server has one event
loop per core and hands connections to them in turn, so some probes share the import's loop: when the
import's multipart parse and JSON decoding ran on that loop, those probes waited for all of it (17 s
of an 18 s import in a debug build).

The check compares two durations of the same run: the slowest probe must take less than a quarter of
the import (it took 94% before the fix, and a few milliseconds after). A slower machine slows both,
so the check needs no fixed limit. The import must also answer 200 with every snippet added, and
every probe 200. Exits 1 listing what failed.

    python3 Tests/system/large_import_test.py [--binary PATH] [--snippets N]
"""

import argparse
import json
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sbsystem import Checks, Client, Server, build_binary, log, new_password  # noqa: E402


def export_file(template, count):
    """An export in the app's format, from one the server made, with `count` new snippets."""
    export = json.loads(template)
    stamp = export["exportedAt"]
    export["snippets"] = [{
        "uuid": str(uuid.uuid4()).upper(), "title": f"imported snippet {index}", "language": "swift",
        "code": f"let value{index} = {index}\n" * 100, "notes": "notes for the large import " * 10,
        "isFavorite": index % 7 == 0, "createdAt": stamp, "updatedAt": stamp, "tags": [],
    } for index in range(count)]
    return json.dumps(export).encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="a built snippetbox binary (default: swift build --product snippetbox)")
    parser.add_argument("--snippets", type=int, default=4_000)
    options = parser.parse_args()
    checks = Checks("large import test")
    expect = checks.expect

    with tempfile.TemporaryDirectory(prefix="snippetbox-import-") as scratch:
        scratch = Path(scratch)
        binary = build_binary(options.binary, copy_to=scratch)
        password = new_password()
        server = Server(binary, scratch / "data", scratch, password, name="import")
        server.start()
        try:
            admin = Client(server.port, timeout=600)
            admin.login(password)
            template = admin.get("/data/export.json")
            expect(template.status == 200, f"the export answers 200 (got {template.status})")
            body = export_file(template.body, options.snippets)
            log(f"importing {options.snippets} snippets ({len(body) / 1e6:.1f} MB) while probing")

            outcome = {}

            def run_import():
                started = time.monotonic()
                answer = admin.post_multipart("/data/import", [], [("file", "export.json", "application/json", body)])
                outcome["seconds"] = time.monotonic() - started
                outcome["status"] = answer.status
                outcome["text"] = answer.text

            importer = threading.Thread(target=run_import)
            importer.start()
            probes = []
            while importer.is_alive():
                probe = Client(server.port, timeout=600)
                answer = probe.request("GET", "/login")
                probe.close()
                probes.append((answer.status, answer.seconds))
                time.sleep(0.02)
            importer.join()

            seconds = outcome.get("seconds", 0)
            slowest = max((probe_seconds for _, probe_seconds in probes), default=0)
            log(f"import: {outcome.get('status')} in {seconds:.1f} s; {len(probes)} probes, slowest {slowest * 1000:.0f} ms")
            expect(outcome.get("status") == 200, f"the import answers 200 (got {outcome.get('status')})")
            expect(f"{options.snippets} added, 0 updated" in outcome.get("text", ""), f"it adds all {options.snippets} snippets")
            expect(len(probes) >= 10, f"probes ran during the import ({len(probes)})")
            expect(all(status == 200 for status, _ in probes), "every probe answers 200")
            expect(slowest < seconds / 4,
                   f"the slowest probe ({slowest:.2f} s) took less than a quarter of the import ({seconds:.2f} s)")
            expect(not server.error_lines(), f"the server logged no error: {server.error_summary()}")
        finally:
            server.stop()

    return checks.result()


if __name__ == "__main__":
    raise SystemExit(main())
