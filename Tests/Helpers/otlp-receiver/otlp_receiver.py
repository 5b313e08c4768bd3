#!/usr/bin/env python3
"""A small OTLP/HTTP receiver for the tracing tests (JSON encoding, `http/json`).

It listens on a free loopback port, prints {"event": "listening", "port": N}, then one JSON line
per span it is sent: {"event": "span", "service", "traceId", "spanId", "parentSpanId", "name",
"kind", "start", "end", "attributes"}. It answers every export 200 with an empty
ExportTraceServiceResponse. Standard library only, so the test needs nothing installed.

It exits on SIGTERM, and by itself when the process that started it is gone (a crashed test
leaves no receiver behind).
"""
import gzip
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def emit(line):
    with LOCK:
        sys.stdout.write(json.dumps(line, sort_keys=True) + "\n")
        sys.stdout.flush()


def value_of(value):
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    return value


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        if "json" not in self.headers.get("Content-Type", ""):
            emit({"event": "refused", "contentType": self.headers.get("Content-Type", "")})
            self.send_response(415)
            self.end_headers()
            return
        try:
            request = json.loads(body)
        except ValueError as error:
            emit({"event": "refused", "reason": str(error)})
            self.send_response(400)
            self.end_headers()
            return
        for resource_spans in request.get("resourceSpans", []):
            resource = {
                a["key"]: value_of(a.get("value", {})) for a in resource_spans.get("resource", {}).get("attributes", [])
            }
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    emit({
                        "event": "span",
                        "service": resource.get("service.name", ""),
                        "instance": resource.get("service.instance.id", ""),
                        "traceId": span.get("traceId", ""),
                        "spanId": span.get("spanId", ""),
                        "parentSpanId": span.get("parentSpanId", ""),
                        "name": span.get("name", ""),
                        "kind": span.get("kind", ""),
                        "start": int(span.get("startTimeUnixNano", "0")),
                        "end": int(span.get("endTimeUnixNano", "0")),
                        "attributes": {a["key"]: value_of(a.get("value", {})) for a in span.get("attributes", [])},
                    })
        answer = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format, *args):
        pass


def watch_parent(parent):
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    emit({"event": "listening", "port": server.server_address[1]})
    server.serve_forever()


if __name__ == "__main__":
    main()
