"""One session's events, or sessions created, one at a time, for Benchmarks/callgrind-session.sh.

    python3 session_client.py MODE URL WARMUP COUNT PIDS ZERO_COMMAND DUMP_COMMAND

Waits for the gateway at URL (both workers joined, the shared root rendered; it fails as soon as
one of PIDS, space-separated, has exited), then does WARMUP steps, runs ZERO_COMMAND (a shell
command), does COUNT more, runs DUMP_COMMAND. A step of MODE `events`: in one session of the root
"board" (created first, its WebSocket rendering stream watched), a POST of 1 to its counter sink on
one keep-alive connection, answered 202, then awaited on the stream (the rendering whose count
shows it). A step of MODE `create`: a POST creating a session of "board", answered 201 (as
`session-bench`'s load creates sessions, one POST after another); after the last, its rendering is
read until its remote child shows, so that the work each creation started is done when counted. Standard library
only: the WebSocket is the few lines of RFC 6455 a client needs (text frames, masked; no
fragmentation or extensions asked for).
"""
import base64
import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse


def fail(message):
    sys.exit(f"session_client: {message}")


def request(connection, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=body, headers=headers)
    answer = connection.getresponse()
    return answer.status, answer.read()


def exited(pid):
    """Whether the process `pid` (a child of the calling shell) has ended: gone, or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def wait_ready(host, port, pids, deadline):
    while time.monotonic() < deadline:
        if any(exited(pid) for pid in pids):
            fail("a process under callgrind exited before the gateway was ready (its log follows)")
        try:
            connection = http.client.HTTPConnection(host, port, timeout=60)
            status, body = request(connection, "GET", "/api/tree")
            workers = json.loads(body).get("workers", []) if status == 200 else []
            if len([w for w in workers if w.get("lastHeardMillisecondsAgo") is not None]) == 2:
                status, body = request(connection, "GET", "/api/rendering")
                if status == 200 and json.loads(body)["rendering"]["c"]["count"] >= 0:
                    return connection
        except (OSError, ValueError, KeyError, TypeError, http.client.HTTPException):
            pass
        time.sleep(0.5)
    fail("the gateway was not ready in time")


class Stream:
    """A WebSocket client reading one rendering stream's text messages."""

    def __init__(self, host, port, path):
        self.socket = socket.create_connection((host, port), timeout=120)
        key = base64.b64encode(os.urandom(16)).decode()
        self.socket.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.receive()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            fail(f"the stream was not upgraded: {head[:120]!r}")

    def receive(self):
        chunk = self.socket.recv(65536)
        if not chunk:
            fail("the stream closed")
        return chunk

    def take(self, count):
        while len(self.buffer) < count:
            self.buffer += self.receive()
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        return taken

    def message(self):
        """The next text message's JSON (control frames skipped)."""
        first, second = self.take(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self.take(2), "big")
        elif length == 127:
            length = int.from_bytes(self.take(8), "big")
        payload = self.take(length)
        if first & 0x0F != 0x1:
            return self.message()
        return json.loads(payload)


def create(connection):
    """Creates a session of "board"; returns its API prefix."""
    status, body = request(connection, "POST", "/api/sessions", json.dumps({"root": "board"}))
    if status != 201:
        fail(f"POST /api/sessions: {status} {body[:200]!r}")
    return f"/api/sessions/{json.loads(body)['session']}"


def rendered(connection, api):
    """Waits until the session's rendering shows its remote child."""
    while True:
        status, body = request(connection, "GET", api + "/rendering")
        if status != 200:
            fail(f"GET {api}/rendering: {status} {body[:200]!r}")
        if json.loads(body)["rendering"]["c"]["count"] >= 0:
            return
        time.sleep(0.01)


def watch(host, port, api):
    """Opens the session's rendering stream; returns it and the counter of the first rendering
    that shows its remote child (counted, sink token given)."""
    stream = Stream(host, port, api + "/renderings")
    counter = stream.message()["rendering"]["c"]
    while counter["count"] < 0 or not counter.get("onIncrement"):
        counter = stream.message()["rendering"]["c"]
    return stream, counter


def main():
    mode, url, warmup, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    pids, zero, dump = sys.argv[5].split(), sys.argv[6], sys.argv[7]
    if mode not in ("events", "create"):
        fail(f"MODE is events or create, not {mode}")
    parsed = urllib.parse.urlparse(url)
    host, port = parsed.hostname, parsed.port
    connection = wait_ready(host, port, pids, time.monotonic() + 600)
    if mode == "create":
        for _ in range(warmup):
            api = create(connection)
        rendered(connection, api)
        subprocess.run(zero, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(steps):
            api = create(connection)
        rendered(connection, api)
        subprocess.run(dump, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return
    api = create(connection)
    stream, counter = watch(host, port, api)
    count = counter["count"]
    path = f"{api}/events/" + urllib.parse.quote(counter["onIncrement"], safe="")

    def send(number):
        nonlocal count
        for _ in range(number):
            status, body = request(connection, "POST", path, "1")
            if status != 202:
                fail(f"POST {path}: {status} {body[:200]!r}")
            count += 1
            while stream.message()["rendering"]["c"]["count"] < count:
                pass

    send(warmup)
    subprocess.run(zero, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    send(steps)
    subprocess.run(dump, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


main()
