#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""srt_proxy_test.py SRT EXAMPLES_DIR: `srt proxy` end to end, driven by the example decider
(examples/srt-proxy-decider.py) with real curl requests to a loopback origin: allow, deny with
the decider's status and reason, setHeaders/removeHeaders, need_body, the 5 s verdict timeout
(503 decider_unavailable), the host lists of the decider's hello, CONNECT refused, a decider that
breaks the protocol, the lifeline's EOF (exit 0), and upstream's argument errors (exit 2); chunked
bodies shown to the decider (need_body); --ca-fd: every request inside a terminated CONNECT decided
like a plain-HTTP one; SRT_PROXY_REPORT_RSS_MS."""
import http.server
import json
import re
import signal
import ssl
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

    def _read_chunked(self):
        out = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b""):
                    pass
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = self._read_chunked().decode()
        else:
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
    out = r.stdout
    # Through a CONNECT, curl -i shows the proxy's 200 first.
    while re.match(rb"HTTP/1\.[01] 200 Connection established\r\n", out, re.I):
        out = out.partition(b"\r\n\r\n")[2]
    head, _, body = out.partition(b"\r\n\r\n")
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

    def test_5b_need_body_de_chunks_a_chunked_body(self):
        chunked = ("-H", "Transfer-Encoding: chunked")
        status, _, body = curl(self.proxy, self.base + "/body", *chunked,
                               "--data-binary", "hello there")
        self.assertEqual(status, 200, body)
        seen = json.loads(body)
        self.assertEqual(seen["body"], "hello there")
        self.assertEqual(seen["headers"].get("transfer-encoding"), "chunked")
        status, headers, body = curl(self.proxy, self.base + "/body", *chunked,
                                     "--data-binary", "a secret")
        self.assertEqual(status, 403, body)
        self.assertEqual(headers.get("x-deny-reason"), "decider")
        # Past max (64): the decider sees the first 64 bytes (cut), the origin the whole body.
        long_body = "x" * 100 + "secret"
        status, _, body = curl(self.proxy, self.base + "/body", *chunked,
                               "--data-binary", long_body)
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["body"], long_body)

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


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca(directory, name):
    """(key path, cert path) of a new CA named `name`."""
    key = os.path.join(directory, name + ".key")
    cert = os.path.join(directory, name + ".pem")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + name,
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return key, cert


@unittest.skipUnless(CURL and shutil.which("openssl"), "curl or openssl is missing")
class SrtProxyTerminatesTls(unittest.TestCase):
    """--ca-fd: the example decider decides every request inside a terminated CONNECT."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="srt-proxy-tls-test.")
        # The origin's own CA (trusted by the proxy through NODE_EXTRA_CA_CERTS, as upstream's
        # Node runtime does) and the CA the proxy mints leaves with (trusted by curl).
        origin_ca_key, origin_ca = make_ca(cls.dir, "origin-ca")
        proxy_ca_key, cls.proxy_ca = make_ca(cls.dir, "proxy-ca")
        leaf_key = os.path.join(cls.dir, "leaf.key")
        csr = os.path.join(cls.dir, "leaf.csr")
        leaf = os.path.join(cls.dir, "leaf.pem")
        ext = os.path.join(cls.dir, "leaf.ext")
        with open(ext, "w", encoding="utf-8") as f:
            f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", leaf_key, "-out", csr, "-subj", "/CN=127.0.0.1")
        openssl("x509", "-req", "-in", csr, "-CA", origin_ca, "-CAkey", origin_ca_key,
                "-CAcreateserial", "-out", leaf, "-days", "2", "-extfile", ext)
        cls.origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(leaf, leaf_key)
        cls.origin.socket = context.wrap_socket(cls.origin.socket, server_side=True)
        threading.Thread(target=cls.origin.serve_forever, daemon=True).start()
        port = cls.origin.server_address[1]
        cls.base = f"https://127.0.0.1:{port}"
        ca_bundle = os.path.join(cls.dir, "proxy-ca-with-key.pem")
        with open(ca_bundle, "w", encoding="utf-8") as out:
            for part in (proxy_ca_key, cls.proxy_ca):
                with open(part, encoding="utf-8") as f:
                    out.write(f.read())
        rules = {
            "allowedDomains": [f"127.0.0.1:{port}"],
            "deniedDomains": [],
            "rules": [
                {"path": "/deny", "verdict": {"action": "deny", "status": 451,
                                              "reason": "not today"}},
                {"prefix": "/set/", "verdict": {"action": "allow",
                                                "setHeaders": {"x-added": ["yes"]},
                                                "removeHeaders": ["x-remove-me"]}},
                {"path": "/cred", "verdict": {"action": "allow", "cred": "api",
                                              "credential": "tok-123"}},
                {"path": "/body", "need_body": 64, "refuse_if_body_has": "secret"},
            ],
            "default": {"action": "allow"},
        }
        rules_path = os.path.join(cls.dir, "rules.json")
        with open(rules_path, "w", encoding="utf-8") as f:
            json.dump(rules, f)
        env = dict(os.environ, NODE_EXTRA_CA_CERTS=origin_ca)
        cls.decider = subprocess.Popen(
            [sys.executable, os.path.join(EXAMPLES, "srt-proxy-decider.py"), "--srt", SRT,
             "--rules", rules_path, "--ca", ca_bundle],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env)
        cls.proxy = cls.decider.stdout.readline().strip()
        if not cls.proxy:
            cls.decider.kill()
            raise RuntimeError("srt proxy did not serve: " + cls.decider.stderr.read())

    @classmethod
    def tearDownClass(cls):
        if cls.decider.poll() is None:
            cls.decider.stdin.close()
            try:
                cls.decider.wait(timeout=20)
            except subprocess.TimeoutExpired:
                cls.decider.kill()
                cls.decider.wait()
        cls.decider.stdout.close()
        cls.decider.stderr.close()
        cls.origin.shutdown()
        cls.origin.server_close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def https(self, path, *extra):
        return curl(self.proxy, self.base + path, "--cacert", self.proxy_ca, *extra)

    def test_an_allowed_request_reaches_the_origin_through_the_minted_leaf(self):
        status, _, body = self.https("/ok?x=1")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["path"], "/ok?x=1")

    def test_the_deciders_deny_inside_the_tunnel(self):
        status, headers, body = self.https("/deny")
        self.assertEqual(status, 451, body)
        self.assertEqual(headers.get("x-deny-reason"), "decider")
        self.assertEqual(body, "not today\n")

    def test_header_edits_and_credentials_inside_the_tunnel(self):
        # Header sets are honoured over TLS without --plaintext-header-set.
        status, _, body = self.https("/set/a", "-H", "X-Remove-Me: 1", "-H", "X-Kept: 1")
        self.assertEqual(status, 200, body)
        headers = json.loads(body)["headers"]
        self.assertNotIn("x-remove-me", headers)
        self.assertEqual(headers.get("x-added"), "yes")
        self.assertEqual(headers.get("x-kept"), "1")
        status, _, body = self.https("/cred", "-H", "Authorization: Basic eDp5")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["headers"].get("authorization"), "Bearer tok-123")

    def test_need_body_inside_the_tunnel_plain_and_chunked(self):
        for extra in ((), ("-H", "Transfer-Encoding: chunked")):
            status, _, body = self.https("/body", *extra, "--data-binary", "hello there")
            self.assertEqual(status, 200, (extra, body))
            self.assertEqual(json.loads(body)["body"], "hello there")
            status, headers, body = self.https("/body", *extra, "--data-binary", "a secret")
            self.assertEqual(status, 403, (extra, body))
            self.assertEqual(headers.get("x-deny-reason"), "decider")

    def test_a_host_header_naming_another_host_is_misdirected(self):
        status, headers, _ = self.https("/ok", "-H", "Host: elsewhere.test")
        self.assertEqual(status, 421)
        self.assertEqual(headers.get("x-deny-reason"), "misdirected")


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

    def run_with_ca(self, pem, env=None):
        ca_read, ca_write = os.pipe()

        def feed():
            # More than a pipe holds: written while srt reads (it stops at its limit).
            try:
                os.write(ca_write, pem)
            except OSError:
                pass
            os.close(ca_write)

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        ours, theirs = socket.socketpair()
        try:
            return subprocess.run([SRT, "proxy", "--decider-fd", str(theirs.fileno()),
                                   "--listen", "127.0.0.1:0", "--ca-fd", str(ca_read)],
                                  pass_fds=(theirs.fileno(), ca_read), capture_output=True,
                                  text=True, timeout=20, check=False, env=env)
        finally:
            os.close(ca_read)
            writer.join(timeout=20)
            ours.close()
            theirs.close()

    def test_a_ca_that_cannot_be_used_is_exit_2_naming_the_descriptor(self):
        r = self.run_with_ca(b"")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(r.stderr, r"^srt proxy: --ca-fd \d+: empty \(a PEM private key and "
                                   r"certificate are expected\)\n$")
        r = self.run_with_ca(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(r.stderr, r"^srt proxy: --ca-fd \d+: no PEM private key in it \(an "
                                   r"encrypted key is not supported\)\n$")
        self.assertNotIn("AAAA", r.stderr)
        r = self.run_with_ca(b"x" * (2 << 20))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(r.stderr, r"^srt proxy: --ca-fd \d+: more than 1048576 bytes")

    def test_report_rss_ms_writes_the_resident_set_size(self):
        ours, theirs = socket.socketpair()
        env = dict(os.environ, SRT_PROXY_REPORT_RSS_MS="50")
        proc = subprocess.Popen([SRT, "proxy", "--decider-fd", str(theirs.fileno()),
                                 "--listen", "127.0.0.1:0"], pass_fds=(theirs.fileno(),),
                                stderr=subprocess.PIPE, text=True, env=env)
        theirs.close()
        lines = []  # before the decider's hello, too; bounded, so a proxy that never reports fails
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr.readline()
                                                              for _ in range(2)), daemon=True)
        reader.start()
        reader.join(timeout=10)
        proc.send_signal(signal.SIGTERM)
        reader.join(timeout=10)
        rest = proc.stderr.read()
        self.assertEqual(proc.wait(timeout=20), 0)
        proc.stderr.close()
        ours.close()
        self.assertEqual(len(lines), 2, rest)
        for line in lines:
            self.assertRegex(line, r"^srt-proxy rss [1-9][0-9]*\n$")
        self.assertIn("srt proxy: stopped (SIGTERM)\n", rest)
        for bad in ("1e3", "-1"):
            r = subprocess.run([SRT, "proxy", "--decider-fd", "9", "--listen", "127.0.0.1:0"],
                               capture_output=True, text=True, timeout=20, check=False,
                               env=dict(os.environ, SRT_PROXY_REPORT_RSS_MS=bad))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(r.stderr, f"srt proxy: SRT_PROXY_REPORT_RSS_MS '{bad}' is not a number "
                                       "of milliseconds from 1 to 2147483647 (unset, empty or 0: "
                                       "off)\n")

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
