#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small decider for `srt proxy` (decider protocol v1, docs/srt-proxy.md).

    srt-proxy-decider.py --srt PATH --rules RULES.json [--listen 127.0.0.1:0] [--ca CA.pem]
                         [-- SRT-PROXY-ARGS]

It starts `srt proxy` with a socket pair as --decider-fd 3 and a pipe as --lifeline-fd 4, prints
the proxy's "serving HOST:PORT" line on its stdout once the proxy serves, and answers every
request by the first rule of RULES.json whose "path" (exact) or "prefix" matches it:

    {"allowedDomains": ["example.com", "127.0.0.1:8080"], "deniedDomains": [],
     "rules": [{"path": "/deny", "verdict": {"action": "deny", "status": 451, "reason": "no"}},
               {"prefix": "/set/", "verdict": {"action": "allow",
                                               "setHeaders": {"x-added": ["yes"]}}},
               {"path": "/body", "need_body": 64, "refuse_if_body_has": "secret"},
               {"path": "/never", "silent": true}],
     "default": {"action": "allow"}}

With --ca, the file (the CA's private key and certificate, PEM) goes to the proxy through a pipe
as --ca-fd 5: the proxy then terminates the TLS of every allowed CONNECT, and the requests inside
come here like plain-HTTP ones (port 443 or the CONNECT's, with "sni" when the client sent one).

A "need_body" rule asks for the body (up to that many bytes) and then allows it unless it holds
"refuse_if_body_has"; a "silent" rule never answers (the proxy then answers 503 itself after 5 s).
When its stdin ends (or it gets SIGTERM) it closes the lifeline: the proxy stops, and this
script exits with the proxy's exit status, having copied the proxy's stderr to its own.
"""
import argparse
import base64
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading

MAX_FRAME = 1 << 20


def send(sock, message):
    data = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def recv_exactly(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def recv(sock):
    head = recv_exactly(sock, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    if n > 64 << 20:
        raise ValueError("oversized frame")
    body = recv_exactly(sock, n)
    return None if body is None else json.loads(body)


def rule_for(rules, path):
    for rule in rules.get("rules", []):
        if rule.get("path") == path or ("prefix" in rule and path.startswith(rule["prefix"])):
            return rule
    return {"verdict": rules.get("default", {"action": "deny", "status": 403})}


def serve(sock, rules):
    hello = recv(sock)
    if hello != {"t": "hello", "proto": 1}:
        raise ValueError(f"unexpected hello {hello!r}")
    send(sock, {"t": "hello", "proto": 1,
                "allowedDomains": rules.get("allowedDomains", []),
                "deniedDomains": rules.get("deniedDomains", [])})
    waiting_body = {}  # id -> rule
    while True:
        msg = recv(sock)
        if msg is None:
            return
        if msg["t"] == "req":
            rule = rule_for(rules, msg["path"])
            if rule.get("silent"):
                continue
            if "need_body" in rule:
                waiting_body[msg["id"]] = rule
                send(sock, {"t": "verdict", "id": msg["id"], "action": "need_body",
                            "max": rule["need_body"]})
                continue
            send(sock, {"t": "verdict", "id": msg["id"], **rule["verdict"]})
        elif msg["t"] == "body":
            rule = waiting_body.pop(msg["id"])
            body = base64.b64decode(msg["data"])
            bad = rule.get("refuse_if_body_has", "").encode()
            if bad and bad in body:
                verdict = {"action": "deny", "status": 403, "reason": "the body is refused"}
            else:
                verdict = {"action": "allow"}
            send(sock, {"t": "verdict", "id": msg["id"], **verdict})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--srt", required=True)
    parser.add_argument("--rules", required=True)
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--ca", help="the TLS-termination CA (key and certificate, PEM)")
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    with open(args.rules, encoding="utf-8") as f:
        rules = json.load(f)

    ours, theirs = socket.socketpair()
    life_read, life_write = os.pipe()
    inherited = [theirs.fileno(), life_read]
    ca_args = []
    if args.ca:
        # The CA through a pipe, read by the proxy until EOF: the key never touches its argv or
        # environment. A PEM key and certificate fit in the pipe's buffer.
        with open(args.ca, "rb") as f:
            pem = f.read()
        ca_read, ca_write = os.pipe()
        os.write(ca_write, pem)
        os.close(ca_write)
        inherited.append(ca_read)
        ca_args = ["--ca-fd", "5"]

    def child_fds():
        # The decider's end as fd 3, the lifeline as fd 4, the CA as fd 5 (dup2 clears
        # close-on-exec).
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in inherited]
        for target, fd in zip((3, 4, 5), high):
            os.dup2(fd, target)

    proxy = subprocess.Popen(
        [args.srt, "proxy", "--decider-fd", "3", "--lifeline-fd", "4", "--listen", args.listen,
         *ca_args, *args.extra],
        pass_fds=tuple(range(3, 3 + len(inherited))), stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, preexec_fn=child_fds)
    theirs.close()
    for fd in inherited[1:]:
        os.close(fd)

    def relay_stderr():
        for line in proxy.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            if line.startswith("srt proxy: serving "):
                print(line.split("serving ", 1)[1].strip(), flush=True)

    relay = threading.Thread(target=relay_stderr, daemon=True)
    relay.start()
    threading.Thread(target=serve, args=(ours, rules), daemon=True).start()

    def stop(*_):
        try:
            os.close(life_write)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    code = proxy.wait()
    relay.join(timeout=5)  # the proxy's last lines ("stopped (...)") first
    sys.stderr.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
