#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""srt_proxy_test.py SRT EXAMPLES_DIR: `srt proxy` end to end, driven by the example decider
(examples/srt-proxy-decider.py) with real curl requests to a loopback origin: allow, deny with
the decider's status and reason, setHeaders/removeHeaders, need_body, the 5 s verdict timeout
(503 decider_unavailable), the host lists of the decider's hello, CONNECT refused, a decider that
breaks the protocol, the lifeline's EOF (exit 0), and upstream's argument errors (exit 2)."""
import http.server
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SRT = sys.argv[1]
EXAMPLES = sys.argv[2]
CURL = shutil.which("curl")


class Origin(http.server.BaseHTTPRequestHandler):
    """Answers every request with what it saw, as JSON."""

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        seen = {"method": self.command, "path": self.path, "body": body,
                "headers": {k.lower(): ", ".join(self.headers.get_all(k))
                            for k in set(self.headers.keys())}}
        data = json.dumps(seen).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", "origin=1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


def curl(proxy, url, *extra):
    """(status, headers dict lower-case, body) of one request through the proxy."""
    r = subprocess.run([CURL, "-q", "-sS", "-i", "--noproxy", "", "--max-time", "20",
                        "--proxy", "http://" + proxy, *extra, url],
                       capture_output=True, check=False)
    head, _, body = r.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body.decode("utf-8", "replace")


@unittest.skipUnless(CURL, "curl is missing")
class SrtProxyWithTheExampleDecider(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        threading.Thread(target=cls.origin.serve_forever, daemon=True).start()
        port = cls.origin.server_address[1]
        cls.base = f"http://127.0.0.1:{port}"
        cls.dir = tempfile.mkdtemp(prefix="srt-proxy-test.")
        rules = {
            "allowedDomains": [f"127.0.0.1:{port}"],
            "deniedDomains": [],
            "rules": [
                {"path": "/deny", "verdict": {"action": "deny", "status": 451,
                                              "reason": "not today"}},
                {"prefix": "/set/", "verdict": {"action": "allow",
                                                "setHeaders": {"x-added": ["yes", "twice"]},
                                                "removeHeaders": ["x-remove-me"]}},
                {"path": "/cred", "verdict": {"action": "allow", "cred": "api",
                                              "credential": "tok-123"}},
                {"path": "/body", "need_body": 64, "refuse_if_body_has": "secret"},
                {"path": "/never", "silent": True},
            ],
            "default": {"action": "allow"},
        }
        rules_path = os.path.join(cls.dir, "rules.json")
        with open(rules_path, "w", encoding="utf-8") as f:
            json.dump(rules, f)
        cls.decider = subprocess.Popen(
            [sys.executable, os.path.join(EXAMPLES, "srt-proxy-decider.py"), "--srt", SRT,
             "--rules", rules_path, "--", "--plaintext-header-set",
             "--strip-response-header", "set_cookie"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cls.proxy = cls.decider.stdout.readline().strip()
        if not cls.proxy:
            cls.decider.kill()
            raise RuntimeError("srt proxy did not serve: " + cls.decider.stderr.read())

    @classmethod
    def tearDownClass(cls):
        if cls.decider.poll() is None:
            cls.decider.kill()
            cls.decider.wait()
        for stream in (cls.decider.stdout, cls.decider.stderr):
            stream.close()
        cls.origin.shutdown()
        cls.origin.server_close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_1_allow_forwards_the_request_and_strips_response_headers(self):
        status, headers, body = curl(self.proxy, self.base + "/ok?x=1")
        self.assertEqual(status, 200, body)
        seen = json.loads(body)
        self.assertEqual(seen["path"], "/ok?x=1")
        self.assertNotIn("set-cookie", headers)  # --strip-response-header set_cookie

    def test_2_deny_carries_the_deciders_status_and_reason(self):
        status, headers, body = curl(self.proxy, self.base + "/deny")
        self.assertEqual(status, 451)
        self.assertEqual(headers.get("x-deny-reason"), "decider")
        self.assertEqual(body, "not today\n")

    def test_3_set_and_remove_headers(self):
        status, _, body = curl(self.proxy, self.base + "/set/a", "-H", "X-Remove-Me: 1",
                               "-H", "X-Added: from-client", "-H", "X-Kept: 1")
        self.assertEqual(status, 200, body)
        headers = json.loads(body)["headers"]
        self.assertNotIn("x-remove-me", headers)
        self.assertEqual(headers.get("x-added"), "yes, twice")  # the client's value replaced
        self.assertEqual(headers.get("x-kept"), "1")

    def test_4_a_credential_replaces_the_clients(self):
        status, _, body = curl(self.proxy, self.base + "/cred", "-H", "Authorization: Basic eDp5",
                               "-H", "Cookie: a=b")
        self.assertEqual(status, 200, body)
        headers = json.loads(body)["headers"]
        self.assertEqual(headers.get("authorization"), "Bearer tok-123")
        self.assertNotIn("cookie", headers)

    def test_5_need_body_shows_the_body_first(self):
        status, _, body = curl(self.proxy, self.base + "/body", "--data-binary", "hello there")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["body"], "hello there")
        status, headers, body = curl(self.proxy, self.base + "/body", "--data-binary", "a secret")
        self.assertEqual(status, 403)
        self.assertEqual(headers.get("x-deny-reason"), "decider")
        self.assertEqual(body, "the body is refused\n")

    def test_6_no_verdict_in_5_seconds_is_503(self):
        start = time.monotonic()
        status, headers, body = curl(self.proxy, self.base + "/never")
        self.assertGreaterEqual(time.monotonic() - start, 4.5)
        self.assertEqual(status, 503)
        self.assertEqual(headers.get("x-deny-reason"), "decider_unavailable")
        self.assertEqual(body, "request decider: decider timed out\n")

    def test_7_hosts_off_the_hellos_list_and_connect_are_refused(self):
        port = self.origin.server_address[1]
        status, headers, body = curl(self.proxy, f"http://127.0.0.2:{port}/x")
        self.assertEqual(status, 403)
        self.assertEqual(headers.get("x-deny-reason"), "host_not_allowed")
        self.assertEqual(body, "Connection blocked by network allowlist\n")
        r = subprocess.run([CURL, "-q", "-sS", "--noproxy", "", "--max-time", "20", "-p",
                            "--proxy", "http://" + self.proxy, "-o", "/dev/null",
                            "-w", "%{http_connect}", self.base + "/x"],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.stdout, "403")
        status, _, _ = curl(self.proxy, self.base + "/ok", "-H", "Host: elsewhere.test")
        self.assertEqual(status, 421)

    def test_9_the_lifelines_eof_stops_the_proxy_with_exit_0(self):
        self.decider.stdin.close()
        self.assertEqual(self.decider.wait(timeout=20), 0)
        err = self.decider.stderr.read()
        self.assertIn("srt proxy: stopped (lifeline closed)\n", err)


class SrtProxyAlone(unittest.TestCase):
    def run_proxy(self, *args, fds=()):
        return subprocess.run([SRT, "proxy", *args], capture_output=True, text=True,
                              pass_fds=fds, timeout=20, check=False)

    def test_bad_arguments_exit_2_with_upstreams_messages(self):
        for args, line in [
            ((), "srt proxy: a decider is required (--decider-fd, or --decider-in and "
                  "--decider-out)"),
            (("--decider-in", "5"), "srt proxy: a decider is required (--decider-fd, or "
                                    "--decider-in and --decider-out)"),
            (("--decider-fd", "5"), "srt proxy: --listen-fd (or --listen for development) is "
                                    "required"),
            (("--decider-fd", "5", "--listen", "0.0.0.0:0"),
             'srt proxy: --listen "0.0.0.0:0" is not a loopback address (127.0.0.0/8, [::1] or '
             'localhost); pass --listen-any-interface to bind it anyway'),
            (("--decider-fd", "5", "--listen", "nonsense"),
             'srt proxy: --listen needs <host:port> with a port from 0 to 65535 (got '
             '"nonsense")'),
            (("--bogus",), "error: unknown option '--bogus'"),
            (("--decider-fd",), "error: option '--decider-fd <fd>' argument missing"),
        ]:
            r = self.run_proxy(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(r.stderr, line + "\n", args)
        r = self.run_proxy("--version", "--bogus")
        self.assertEqual(r.returncode, 0)
        self.assertTrue(r.stdout.startswith("srt-proxy "), r.stdout)

    def test_a_decider_that_breaks_the_protocol_stops_the_proxy(self):
        ours, theirs = socket.socketpair()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        proc = subprocess.Popen([SRT, "proxy", "--decider-fd", str(theirs.fileno()),
                                 "--listen", f"127.0.0.1:{port}"],
                                pass_fds=(theirs.fileno(),), stderr=subprocess.PIPE, text=True)
        theirs.close()

        def frame(obj):
            data = json.dumps(obj).encode()
            return struct.pack(">I", len(data)) + data

        (n,) = struct.unpack(">I", ours.recv(4))
        self.assertEqual(json.loads(ours.recv(n)), {"t": "hello", "proto": 1})
        ours.sendall(frame({"t": "hello", "proto": 1, "allowedDomains": [],
                            "deniedDomains": []}))
        self.assertIn("srt proxy: serving 127.0.0.1:%d" % port, proc.stderr.readline())
        # A verdict with a duplicate key (for a request nothing asked about, too) is a violation.
        bad = b'{"t":"verdict","id":1,"id":1,"action":"allow"}'
        ours.sendall(struct.pack(">I", len(bad)) + bad)
        self.assertEqual(proc.wait(timeout=20), 0)
        self.assertEqual(proc.stderr.read(),
                         "srt proxy: stopped (decider: bad verdict frame: duplicate key in "
                         "frame)\n")
        proc.stderr.close()
        ours.close()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
