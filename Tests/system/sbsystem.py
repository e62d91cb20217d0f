"""Shared pieces of SnippetBox's system tests (crash_test.py, load_test.py).

Only the Python standard library: building and starting the real `snippetbox` binary, an HTTP
client with its own cookies, the login and CSRF dance when the app has them, multipart forms,
valid PNG images of any size, and reading back what a snippet holds.
"""

import html
import http.client
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import time
import urllib.parse
import uuid
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SWIFT_BIN = "/opt/swift/usr/bin"
EXTERNAL_THRESHOLD = 128 * 1024  # ObjectGraph's ExternalStorage.thresholdBytes


def log(message):
    print(message, flush=True)


# MARK: - Building and running the server

def build_binary(explicit=None, copy_to=None):
    """The server binary: `explicit` if given, else what `swift build --product snippetbox` makes.

    The binary is copied to `copy_to` (a folder), so that another build in the same .build while a
    test runs cannot swap it underneath a running test.
    """
    if explicit:
        binary = Path(explicit).resolve()
        if not binary.is_file():
            raise SystemExit(f"no server binary at {binary}")
    else:
        env = dict(os.environ, PATH=f"{SWIFT_BIN}:{os.environ.get('PATH', '')}")
        for attempt in range(1, 4):
            log(f"$ swift build --product snippetbox (attempt {attempt})")
            started = time.monotonic()
            done = subprocess.run(["swift", "build", "--product", "snippetbox"], cwd=REPO, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if done.returncode == 0:
                log(f"  built in {time.monotonic() - started:.0f} s")
                break
            log("\n".join(done.stdout.splitlines()[-25:]))
            if attempt == 3:
                raise SystemExit("swift build --product snippetbox failed")
            time.sleep(20)
        bin_dir = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPO, env=env, check=True,
                                 stdout=subprocess.PIPE, text=True).stdout.strip()
        binary = Path(bin_dir) / "snippetbox"
    if copy_to is not None:
        copy = Path(copy_to) / "snippetbox"
        shutil.copy2(binary, copy)
        binary = copy
    return binary


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One run of the snippetbox binary on a data folder, with its output in a log file."""

    def __init__(self, binary, data_dir, log_dir, password, workdir=REPO, name="server"):
        self.binary = Path(binary)
        self.data_dir = Path(data_dir)
        self.log_dir = Path(log_dir)
        self.password = password
        self.workdir = Path(workdir)
        self.name = name
        self.process = None
        self.port = None
        self.log_path = None
        self.runs = 0

    def env(self, port=None):
        env = dict(os.environ)
        env.update(DATA_DIR=str(self.data_dir), HOST="127.0.0.1", ADMIN_PASSWORD=self.password,
                   LOG_LEVEL=env.get("LOG_LEVEL", "info"))
        if port is not None:
            env["PORT"] = str(port)
        env.pop("BASE_PATH", None)
        return env

    def start(self, timeout=120):
        assert self.process is None or self.process.poll() is not None
        self.runs += 1
        self.port = free_port()
        self.log_path = self.log_dir / f"{self.name}-{self.runs:02d}.log"
        output = open(self.log_path, "wb")
        # The working directory is the repository: the app reads Views/ and Public/ from there.
        self.process = subprocess.Popen([str(self.binary)], cwd=self.workdir, env=self.env(self.port),
                                        stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        output.close()
        started = time.monotonic()
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with status {self.process.returncode} while starting:\n"
                                   + self.log_tail())
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/snippets/new")
                response = conn.getresponse()
                response.read()
                conn.close()
                if response.status < 500:
                    return time.monotonic() - started
            except OSError:
                pass
            if time.monotonic() - started > timeout:
                self.kill()
                raise RuntimeError(f"the server did not answer within {timeout} s:\n" + self.log_tail())
            time.sleep(0.05)

    def kill(self):
        """SIGKILL: no shutdown code runs, as in a crash or a power cut of the process."""
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        if self.process:
            self.process.wait()

    def stop(self, timeout=30):
        """SIGTERM and wait, the way a service manager stops it; returns the exit status."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                log(f"  the server did not stop within {timeout} s of SIGTERM; killing it")
                self.kill()
        return self.process.returncode if self.process else None

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines=40):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join("    | " + line for line in text.splitlines()[-lines:])

    def error_summary(self, limit=10):
        """The distinct warnings and errors of every run, most frequent first, as (count, line):
        ids, tokens and numbers are blanked out so that repeats of one message count together."""
        counts = {}
        for line in self.error_lines():
            line = line.split(": ", 1)[1] if ": " in line else line
            key = re.sub(r"\[request-id: [^\]]*\]", "", line)
            key = re.sub(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f-]{27}", "<id>", key)
            key = re.sub(r"[A-Za-z0-9_+/=-]{20,}", "<token>", key).strip()
            counts[key] = counts.get(key, 0) + 1
        return sorted(((n, key) for key, n in counts.items()), reverse=True)[:limit]

    def error_lines(self):
        """Lines the server logged at warning level or above (where Vapor reports the errors behind
        a 500), in every run so far."""
        found = []
        for path in sorted(self.log_dir.glob(f"{self.name}-*.log")):
            for line in path.read_text(errors="replace").splitlines():
                if any(mark in line for mark in ("[ WARNING ]", "[ ERROR ]", "[ CRITICAL ]", "Fatal error")):
                    found.append(f"{path.name}: {line.strip()}")
        return found

    def run_command(self, *arguments, timeout=300):
        """Runs `snippetbox <arguments>` on the same data folder (no server) and returns (status, output)."""
        done = subprocess.run([str(self.binary), *arguments], cwd=self.workdir, env=self.env(free_port()),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout)
        return done.returncode, done.stdout.decode(errors="replace")


class Checks:
    """A system test's named checks: each is logged `ok` or `FAIL` as it is made, and `result` says
    whether all held (an exit status for the script)."""

    def __init__(self, name):
        self.name = name
        self.failures = []

    def expect(self, condition, what):
        log(f"  {'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            self.failures.append(what)

    def result(self):
        if self.failures:
            log(f"{self.name} failed: {len(self.failures)} problem(s): " + "; ".join(self.failures))
            return 1
        log(f"{self.name} passed")
        return 0


# MARK: - HTTP

class Response:
    def __init__(self, status, headers, body, seconds):
        self.status = status
        self.headers = headers
        self.body = body
        self.seconds = seconds

    @property
    def text(self):
        return self.body.decode("utf-8", errors="replace")

    def header(self, name):
        return self.headers.get(name)

    def error_summary(self, limit=300):
        """The messages of an error page or a form with errors, else the start of the body."""
        text = self.text
        found = [html.unescape(re.sub(r"<[^>]+>", "", m)).strip()
                 for m in re.findall(r'<p class="error"[^>]*>(.*?)</p>', text, re.S)]
        if not found:
            main = re.search(r"<main[^>]*>(.*?)</main>", text, re.S)
            chunk = main.group(1) if main else text
            found = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", chunk)).split())]
        return "; ".join(found)[:limit]


class NotLoggedIn(Exception):
    pass


class Client:
    """A browser without JavaScript: one keep-alive connection, its own cookies, its CSRF token."""

    def __init__(self, port, host="127.0.0.1", timeout=60):
        self.host = host
        self.port = port
        self.timeout = timeout
        self.conn = None
        self.cookies = {}
        self.csrf = None
        self.has_login = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, headers=None):
        """One request; redirects are not followed. A failed connection raises OSError (or an
        http.client exception); a GET on a reused keep-alive connection is retried once on a new one."""
        all_headers = {"Accept": "text/html,*/*"}
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if headers:
            all_headers.update(headers)
        for attempt in (1, 2):
            reused = self.conn is not None
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            started = time.monotonic()
            try:
                self.conn.request(method, path, body=body, headers=all_headers)
                raw = self.conn.getresponse()
                data = raw.read()
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 1 and reused and method == "GET":
                    continue
                raise
            seconds = time.monotonic() - started
            headers_out = {k.lower(): v for k, v in raw.getheaders()}
            for cookie in raw.msg.get_all("Set-Cookie") or []:
                pair = cookie.split(";", 1)[0]
                name, _, value = pair.partition("=")
                name = name.strip()
                attributes = cookie.lower()
                if not value or "max-age=0" in attributes or "expires=thu, 01 jan 1970" in attributes:
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = value.strip()
            if raw.getheader("Connection", "").lower() == "close":
                self.close()
            return Response(raw.status, headers_out, data, seconds)

    def get(self, path):
        response = self.request("GET", path)
        if response.status == 303 and self.has_login and "/login" in (response.header("location") or ""):
            raise NotLoggedIn(f"GET {path} redirected to the login page")
        return response

    def post_form(self, path, fields):
        fields = list(fields)
        if self.csrf is not None:
            fields.append(("csrf", self.csrf))
        body = urllib.parse.urlencode(fields).encode()
        return self.request("POST", path, body, self._csrf_header({"Content-Type": "application/x-www-form-urlencoded"}))

    def post_multipart(self, path, fields, files=()):
        fields = list(fields)
        if self.csrf is not None:
            fields.append(("csrf", self.csrf))
        body, content_type = multipart(fields, files)
        return self.request("POST", path, body, self._csrf_header({"Content-Type": content_type}))

    def _csrf_header(self, headers):
        if self.csrf is not None:
            headers["X-CSRF-Token"] = self.csrf
        return headers

    def login(self, password, username="admin"):
        """Logs in when the app has a login page (GET /login is not 404), then reads the CSRF token."""
        self.cookies.clear()
        self.csrf = None
        page = self.request("GET", "/login")
        if page.status == 404:
            self.has_login = False
        else:
            if page.status != 200:
                raise RuntimeError(f"GET /login answered {page.status}: {page.error_summary()}")
            self.has_login = True
            token = hidden_input(page.text, "csrf")
            fields = [("username", username), ("password", password)]
            if token is not None:
                fields.append(("csrf", token))
            body = urllib.parse.urlencode(fields).encode()
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            if token is not None:
                headers["X-CSRF-Token"] = token
            answer = self.request("POST", "/login", body, headers)
            if answer.status != 303:
                raise RuntimeError(f"POST /login answered {answer.status}, not 303: {answer.error_summary()}")
            if (answer.header("location") or "").split("?")[0].rstrip("/").endswith("/login"):
                raise RuntimeError(f"POST /login sent us back to {answer.header('location')}: wrong password?")
        self.refresh_csrf()

    def refresh_csrf(self):
        form = self.get("/snippets/new")
        if form.status != 200:
            raise RuntimeError(f"GET /snippets/new answered {form.status}: {form.error_summary()}")
        self.csrf = hidden_input(form.text, "csrf")


def hidden_input(page, name):
    """The value of the first <input … name="name" …> on a page, or None."""
    for tag in re.findall(r"<input\b[^>]*>", page, re.I):
        if re.search(r'\bname\s*=\s*["\']?' + re.escape(name) + r'["\'\s/>]', tag + ">"):
            value = re.search(r'\bvalue\s*=\s*"([^"]*)"', tag) or re.search(r"\bvalue\s*=\s*'([^']*)'", tag)
            return html.unescape(value.group(1)) if value else ""
    return None


def multipart(fields, files=()):
    """A multipart/form-data body: fields are (name, text), files are (name, filename, type, bytes)."""
    boundary = "----snippetbox-system-test-" + uuid.uuid4().hex
    parts = []
    for name, value in fields:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                     + str(value).encode("utf-8") + b"\r\n")
    for name, filename, content_type, data in files:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                     f"Content-Type: {content_type}\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


# MARK: - Content

def png(width, height, rng, level=1):
    """A valid RGB PNG of random pixels (so it hardly compresses: about 3 * width * height bytes)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    row = 3 * width
    raw = b"".join(b"\x00" + rng.randbytes(row) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, level))
            + chunk(b"IEND", b""))


def image_of_about(size, rng):
    """A PNG of roughly `size` bytes."""
    side = max(1, int((size / 3) ** 0.5))
    return png(side, max(1, size // (3 * side)), rng)


WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
         "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
         "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "fetch", "parse", "decode", "render")
LANGUAGES = ("swift", "python", "plaintext")


def code_text(rng, marker):
    """Code with several lines, a tab, HTML-looking text and characters outside ASCII."""
    lines = [f"// {marker}"]
    for i in range(rng.randint(1, 30)):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
        lines.append(f"\tlet v{i} = \"{words}\" // <b>&amp;</b> café → 🚀 {rng.random():.6f}")
    return "\n".join(lines) + ("\n" if rng.random() < 0.5 else "")


def snippet_fields(state, version=None):
    """The fields of the snippet form for a state {title, language, code, notes, tags}."""
    fields = [("title", state["title"]), ("language", state["language"]), ("folder", ""), ("newFolder", ""),
              ("newTags", state.get("tags", "")), ("code", state["code"]), ("notes", state.get("notes", ""))]
    if version is not None:
        fields.append(("version", version))
    return fields


def snippet_files(image):
    """The image part: the PNG, or an empty file part as a browser sends when nothing is chosen."""
    if image:
        return [("image", "x.png", "image/png", image)]
    return [("image", "", "application/octet-stream", b"")]


UUID_IN_LOCATION = re.compile(r"/snippets/([0-9A-Fa-f-]{36})(?:[/?#]|$)")


def uuid_from_location(location):
    match = UUID_IN_LOCATION.search(location or "")
    return match.group(1).upper() if match else None


def page_title(page):
    match = re.search(r"<title>(.*?)</title>", page, re.S)
    return html.unescape(match.group(1)).strip() if match else None


def read_snippet(client, snippet_id, with_title=True):
    """What the server holds for a snippet: {'title', 'code', 'image'} (image None when it has none;
    title None when not asked for: the page is the slowest of the three), or raises LookupError."""
    title = None
    if with_title:
        page = client.get(f"/snippets/{snippet_id}")
        if page.status != 200:
            raise LookupError(f"GET /snippets/{snippet_id} answered {page.status}: {page.error_summary(160)}")
        title = page_title(page.text)
    raw = client.get(f"/snippets/{snippet_id}/raw")
    if raw.status != 200:
        raise LookupError(f"GET /snippets/{snippet_id}/raw answered {raw.status}: {raw.error_summary(160)}")
    image = client.get(f"/snippets/{snippet_id}/image")
    if image.status not in (200, 404):
        raise LookupError(f"GET /snippets/{snippet_id}/image answered {image.status}: {image.error_summary(160)}")
    return {"title": title, "code": raw.body.decode("utf-8", errors="replace"),
            "image": image.body if image.status == 200 else None, "checked_title": with_title}


def title_matches(found, expected):
    """The page's <title> is "<snippet title> · SnippetBox", the snippet's title between Unicode's
    isolate marks (U+2068 … U+2069), so that a title written right to left keeps the words after it."""
    if not found.get("checked_title", True):
        return True
    title = found["title"] or ""
    return title.startswith("\u2068" + expected["title"] + "\u2069 ·")


def matches(found, expected):
    """Whether what the server holds is `expected`."""
    return title_matches(found, expected) and found["code"] == expected["code"] and found["image"] == expected["image"]


def describe_difference(found, expected):
    parts = []
    if not title_matches(found, expected):
        parts.append(f"title {found['title']!r} instead of {expected['title']!r}")
    if found["code"] != expected["code"]:
        parts.append(f"code of {len(found['code'])} characters starting {found['code'][:50]!r} instead of "
                     f"{len(expected['code'])} starting {expected['code'][:50]!r}")
    if found["image"] != expected["image"]:
        def size(data):
            return "no image" if data is None else f"{len(data)} bytes"
        parts.append(f"image: {size(found['image'])} instead of {size(expected['image'])}")
    return "; ".join(parts) or "identical"


def percentile(sorted_values, fraction):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(fraction * (len(sorted_values) - 1)))))
    return sorted_values[index]


def new_password():
    return "sys-test-" + uuid.uuid4().hex[:16]


def remove_folder(path):
    shutil.rmtree(path, ignore_errors=True)
