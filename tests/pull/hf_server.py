#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face Hub, for tests/pull only.

Serves ROOT/OWNER/REPO/FILE the way the Hub does:
  GET /api/models/OWNER/REPO              {"siblings": [{"rfilename": FILE}, ...]}
  GET /OWNER/REPO/resolve/main/FILE       302 to /cdn/OWNER/REPO/FILE, X-Linked-Etag = sha256
  GET /cdn/OWNER/REPO/FILE                the bytes, with Range (206) support
Files whose names say so misbehave: "cut" (the first response stops halfway and the connection
closes), "corrupt" (one byte flipped; the ETag is the true file's), "noetag" (no ETag sent).
Binds 127.0.0.1 on a free port written to PORT_FILE; logs each request and its Range to LOG;
exits by itself after 300 s so that a failed test never leaves it running.
"""
import hashlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

root, port_file, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
cut_done = set()
log_lock = threading.Lock()


def log(line):
    with log_lock, open(log_path, "a") as f:
        f.write(line + "\n")


class Hub(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = unquote(self.path)
        log(f"GET {path} Range={self.headers.get('Range', '-')}")
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) == 4:
            folder = os.path.join(root, parts[2], parts[3])
            if not os.path.isdir(folder):
                return self.send(404, b'{"error":"Repository not found"}')
            names = sorted(os.listdir(folder))
            return self.send(200, json.dumps({"siblings": [{"rfilename": n} for n in names]}).encode())
        if len(parts) == 5 and parts[2:4] == ["resolve", "main"]:
            file = os.path.join(root, parts[0], parts[1], parts[4])
            if not os.path.isfile(file):
                return self.send(404, b"Entry not found")
            headers = [("Location", f"/cdn/{parts[0]}/{parts[1]}/{parts[4]}")]
            if "noetag" not in parts[4]:
                with open(file, "rb") as f:
                    headers.append(("X-Linked-Etag", '"' + hashlib.sha256(f.read()).hexdigest() + '"'))
            return self.send(302, b"", headers)
        if len(parts) == 4 and parts[0] == "cdn":
            return self.serve_file(os.path.join(root, *parts[1:]), parts[3])
        self.send(404, b"no such route")

    def serve_file(self, file, name):
        if not os.path.isfile(file):
            return self.send(404, b"Entry not found")
        with open(file, "rb") as f:
            data = bytearray(f.read())
        if "corrupt" in name:
            data[len(data) // 2] ^= 0xFF
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                return self.send(416, b"", [("Content-Range", f"bytes */{len(data)}")])
        body = bytes(data[start:])
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if "cut" in name and file not in cut_done:
            cut_done.add(file)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
threading.Timer(300, server.shutdown).start()
server.serve_forever()
