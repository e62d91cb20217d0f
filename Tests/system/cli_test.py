#!/usr/bin/env python3
"""The snippetbox command line: help, maintenance commands' errors, and the address it announces.

Runs the real binary (built as the other system tests build it) from the repository's root, each
case on a data folder of its own in a temporary directory, and checks exit codes, what is printed,
and that nothing is created where nothing should be. Exits 1 listing every case that failed.
"""

import argparse
import os
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from sbsystem import REPO, Checks, build_binary, free_port, log


def run(binary, args, data_dir, extra_env=None, timeout=120):
    env = dict(os.environ, DATA_DIR=str(data_dir))
    env.pop("BASE_PATH", None)
    env.update(extra_env or {})
    done = subprocess.run([str(binary), *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def start(binary, args, data_dir, port, log_path):
    env = dict(os.environ, DATA_DIR=str(data_dir), HOST="127.0.0.1", PORT=str(port), BASE_PATH="/box")
    output = open(log_path, "w")
    return subprocess.Popen([str(binary), *args], cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT), output


def wait_for_line(log_path, text, process, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in Path(log_path).read_text():
            return True
        if process.poll() is not None:
            return text in Path(log_path).read_text()
        time.sleep(0.2)
    return False


def stop(process, output):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    output.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="a built snippetbox binary (default: swift build --product snippetbox)")
    options = parser.parse_args()
    checks = Checks("cli test")
    expect = checks.expect

    with tempfile.TemporaryDirectory(prefix="snippetbox-cli-") as scratch:
        scratch = Path(scratch)
        binary = build_binary(options.binary, copy_to=scratch)

        log("$ snippetbox --help")
        missing = scratch / "never-made"
        status, out, err = run(binary, ["--help"], missing)
        expect(status == 0, "--help exits 0")
        expect("snippetbox check" in out and "snippetbox restore ARCHIVE" in out, "--help lists the maintenance commands")
        expect("routes" not in out, "--help does not offer Vapor's routes command, which snippetbox refuses")
        expect(not missing.exists(), "--help creates no DATA_DIR")

        log("$ snippetbox check (DATA_DIR missing)")
        status, out, err = run(binary, ["check"], missing)
        expect(status == 1, f"check of a missing DATA_DIR exits 1 (got {status})")
        expect("snippetbox check failed: there is no data directory" in err, f"and says so: {err.strip()!r}")
        expect(not missing.exists(), "check creates no DATA_DIR")

        log("$ snippetbox check extra")
        status, out, err = run(binary, ["check", "extra"], missing)
        expect(status == 2 and "usage: snippetbox check" in err, f"extra arguments give the usage and exit 2 (got {status}, {err.strip()!r})")

        log("$ snippetbox serve --port P (PORT is another)")
        data = scratch / "served"
        env_port, flag_port = free_port(), free_port()
        server, output = start(binary, ["serve", "--port", str(flag_port)], data, env_port, scratch / "serve.log")
        try:
            announced = f"SnippetBox is running at http://127.0.0.1:{flag_port}/box/"
            expect(wait_for_line(scratch / "serve.log", announced, server), f"announces the port it bound: {announced}")
            text = (scratch / "serve.log").read_text()
            expect(f":{env_port}/" not in text, "and not PORT, which it did not bind")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{flag_port}/box/login", timeout=30) as response:
                    expect(response.status == 200, "the announced address serves the login page")
            except Exception as error:  # noqa: BLE001 - any failure to reach it is the finding
                expect(False, f"the announced address serves the login page ({error})")

            log("$ snippetbox on a port already taken")
            second, second_output = start(binary, [], scratch / "other", flag_port, scratch / "taken.log")
            try:
                second.wait(timeout=120)
            except subprocess.TimeoutExpired:
                pass
            stop(second, second_output)
            text = (scratch / "taken.log").read_text()
            expect(second.returncode == 1, f"a second server on a taken port exits 1 (got {second.returncode})")
            expect("is running at" not in text, "and announces no address")
        finally:
            stop(server, output)

        log("$ snippetbox check --repair (a sound data directory)")
        status, out, err = run(binary, ["check", "--repair"], data)
        expect(status == 0 and "accounts.store: ok" in out and "removed" not in out,
               f"repairs nothing where nothing is wrong, exit 0 (got {status}, {out.strip()!r}, {err.strip()!r})")

    return checks.result()


if __name__ == "__main__":
    raise SystemExit(main())
