#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The recipes of docs/recipes.md, run with the real srt against loopback stand-ins.

  recipes_test.py --srt BUILD/bin/srt --src SRC_DIR [--node-modules DIR] [unittest args...]

Each recipe's settings file (docs/recipes/*.json) is used as written, with two additions:
`network.dnsServers` names a dnsmasq this test starts, which maps the recipe's public names
(registry.npmjs.org, github.com, pypi.org, files.pythonhosted.org, deb.debian.org) to one
random loopback address 127.X.Y.Z, and `network.allowedDomains` gets that address's ports
(`127.X.Y.Z:443`, `:80`, `:22`), the carve-out that lets an allowed name reach a loopback
address at all. The commands are the documented ones; the clients are told to trust the
test's certificate authority (NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO, SSL_CERT_FILE), and apt is
pointed at the test's sources list and key (APT_CONFIG). Nothing leaves loopback: dnsmasq has no
upstream, and srt resolves only through it.

Stand-ins (threads of this process, and two daemons stopped by pid at the end): an HTTPS server
on 127.X.Y.Z:443 answering per Host as the npm registry (packument, tarball, audit), GitHub
(git's smart HTTP through `git http-backend`), PyPI's JSON API and files.pythonhosted.org; an
HTTP server on :80 as deb.debian.org (a signed bookworm suite with one package); sshd on :22.
Each recipe runs as root and as nobody. Needs root (setpriv, ports below 1024, sshd); skips
(exit 77) without it or without a tool, unless SRT_MUST_WORK=1.
"""
import argparse
import base64
import ctypes
import email.utils
import gzip
import hashlib
import http.server
import io
import json
import os
import pwd
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import zipfile

ARGS = None
NAMES = ["registry.npmjs.org", "github.com", "pypi.org", "files.pythonhosted.org",
         "deb.debian.org"]
SKIP = 77
TOOLS = ["bwrap", "setpriv", "dnsmasq", "openssl", "git", "node", "npm", "npx", "sshd",
         "ssh", "ssh-keygen", "gpg", "gpg-agent", "gpgconf", "apt-get", "dpkg-deb", "python3"]
# The packages the stand-ins serve (generated here; the documentation shows real names).
NPM_PKG = "srt-recipe-hello"
PY_PKG = "srt_recipe_hello"
DEB_PKG = "srt-recipe-hello"
GIT_REPO = "srt-recipes/hello"

# The documented commands, with {pkg} / {repo} for the package and repository; the
# documentation must show each one with its example names (DocTest checks that).
DOC_EXAMPLES = {"npm": "cowsay", "py": "six", "deb": "hello", "repo": "octocat/Hello-World"}
NPM_INSTALL = "npm install {pkg}"
NPX_RUN = "npx -y {pkg}"
PY_FETCH = "python3 fetch_wheel.py {pkg} vendor"
GIT_HTTPS_CLONE = 'git clone -q https://github.com/{repo}.git "$TMPDIR/repo"'
GIT_SSH = ('GIT_SSH_COMMAND="$GIT_SSH_COMMAND -i $HOME/.ssh/id_ed25519_sandbox'
           ' -o IdentitiesOnly=yes -o UserKnownHostsFile=$HOME/.ssh/known_hosts"')
APT_OPTS = ('o="-o APT::Sandbox::User=root -o Dir::State::Lists=$PWD/.apt/lists'
            ' -o Dir::Cache=$PWD/.apt/cache -o Acquire::EnableSrvRecords=false"')
APT_RUN = "apt-get $o update && apt-get $o download {pkg}"


def must_work():
    return os.environ.get("SRT_MUST_WORK") == "1"


def run(argv, check=True, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{argv}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def as_user(who):
    """The prefix that runs a command as `who` (root: this process's own identity)."""
    if who == "root":
        return []
    pw = pwd.getpwnam(who)
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def die_with_us():
    """preexec_fn for the daemons: the kernel sends them SIGTERM if this test dies first."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def tool(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


class Request:
    __slots__ = ("host", "method", "path")

    def __init__(self, host, method, path):
        self.host, self.method, self.path = host, method, path

    def __repr__(self):
        return f"{self.method} {self.host}{self.path}"


class Origins(http.server.BaseHTTPRequestHandler):
    """Every stand-in origin, told apart by the Host header (the real names)."""
    world = None  # the World, set before serving
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status, body, ctype="application/octet-stream", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self):
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].lower()
        body = self._body() if self.command == "POST" else b""
        self.world.requests.append(Request(host, self.command, self.path))
        route = self.world.routes.get(host)
        if route is None:
            return self._send(421, b"no such origin here\n", "text/plain")
        status, ctype, data, headers = route(self, urllib.parse.urlsplit(self.path), body)
        self._send(status, data, ctype, headers)

    do_GET = do_POST = do_HEAD = _handle


class Server(threading.Thread):
    def __init__(self, addr, port, context=None):
        super().__init__(daemon=True)
        self.httpd = http.server.ThreadingHTTPServer((addr, port), Origins)
        self.httpd.daemon_threads = True
        if context:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.start()

    def run(self):
        self.httpd.serve_forever(poll_interval=0.1)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class World:
    """The stand-ins, the identities' homes and projects, and srt runs against them."""

    def __init__(self):
        self.requests = []
        self.daemons = []  # (name, Popen)
        self.servers = []
        self.tmp = tempfile.mkdtemp(prefix="srt-recipes-", dir="/var/tmp")
        os.chmod(self.tmp, 0o755)
        self.dir = lambda *p: os.path.join(self.tmp, *p)
        self.routes = {"registry.npmjs.org": self.npm_registry, "github.com": self.github,
                       "pypi.org": self.pypi, "files.pythonhosted.org": self.pythonhosted,
                       "deb.debian.org": self.debian}
        Origins.world = self
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # --- setup -------------------------------------------------------------------------------
    def _start(self):
        self._bind_address()
        self._certificates()
        self._dnsmasq()
        self.ready = set()

    def need(self, *parts):
        """Builds what a recipe serves, once: npm, wheel, git, apt, sshd."""
        for part in parts:
            if part not in self.ready:
                getattr(self, {"npm": "_npm_package", "wheel": "_wheel", "git": "_git_repository",
                               "apt": "_apt_suite", "sshd": "_sshd"}[part])()
                self.ready.add(part)

    def _bind_address(self):
        # A random 127.X.Y.Z where 443, 80 and 22 are all free: other tests (and other trees'
        # runs) use 127.0.0.1.
        for _ in range(20):
            addr = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"
            try:
                self.https = Server(addr, 443)
            except OSError:
                continue
            try:
                self.http = Server(addr, 80)
            except OSError:
                self.https.stop()
                continue
            probe = socket.socket()
            try:
                probe.bind((addr, 22))  # for sshd, if a recipe needs it
            except OSError:
                self.https.stop()
                self.http.stop()
                continue
            finally:
                probe.close()
            self.addr = addr
            self.servers = [self.https, self.http]
            return
        raise RuntimeError("no loopback address with 443, 80 and 22 free")

    def _certificates(self):
        # A CA and one server certificate for every name; the HTTPS stand-in then switches to TLS.
        d = self.dir("tls")
        os.mkdir(d)
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        run(["openssl", "req", "-x509", *ec, "-subj", "/CN=srt recipes test CA", "-days", "2",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
             "keyUsage=critical,keyCertSign,cRLSign", "-keyout", f"{d}/ca.key", "-out",
             f"{d}/ca.pem"])
        run(["openssl", "req", *ec, "-subj", "/CN=github.com", "-keyout", f"{d}/server.key",
             "-out", f"{d}/server.csr"])
        with open(f"{d}/ext.cnf", "w") as f:
            f.write("subjectAltName=" + ",".join("DNS:" + n for n in NAMES) +
                    "\nextendedKeyUsage=serverAuth\n")
        run(["openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.pem", "-CAkey",
             f"{d}/ca.key", "-set_serial", str(random.randint(1, 2**62)), "-days", "2",
             "-extfile", f"{d}/ext.cnf", "-out", f"{d}/server.pem"])
        os.chmod(f"{d}/ca.pem", 0o644)
        self.ca = f"{d}/ca.pem"
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(f"{d}/server.pem", f"{d}/server.key")
        self.https.stop()
        self.https = Server(self.addr, 443, ctx)
        self.servers = [self.https, self.http]

    def _npm_package(self):
        # A package with a bin, packed by npm itself; served as registry.npmjs.org serves one.
        d = self.dir("npm-src")
        os.mkdir(d)
        with open(f"{d}/package.json", "w") as f:
            json.dump({"name": NPM_PKG, "version": "1.0.0", "license": "Apache-2.0",
                       "description": "srt recipes test package", "bin": {NPM_PKG: "cli.js"},
                       "main": "cli.js"}, f)
        with open(f"{d}/cli.js", "w") as f:
            f.write("#!/usr/bin/env node\nconsole.log('hello from " + NPM_PKG + "');\n")
        os.chmod(f"{d}/cli.js", 0o755)
        run(["npm", "pack", "--silent", "--pack-destination", self.tmp], cwd=d,
            env={**os.environ, "npm_config_cache": self.dir("npm-pack-cache")})
        with open(self.dir(f"{NPM_PKG}-1.0.0.tgz"), "rb") as f:
            self.npm_tgz = f.read()

    def _wheel(self):
        buf = io.BytesIO()
        dist = f"{PY_PKG}-1.0.dist-info"
        files = {f"{PY_PKG}/__init__.py": "GREETING = 'hello from " + PY_PKG + "'\n",
                 f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {PY_PKG}\nVersion: 1.0\n",
                 f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: srt-test\nRoot-Is-Purelib: "
                                  "true\nTag: py3-none-any\n"}
        record = "".join(f"{n},,\n" for n in files) + f"{dist}/RECORD,,\n"
        with zipfile.ZipFile(buf, "w") as z:
            for n, text in files.items():
                z.writestr(n, text)
            z.writestr(f"{dist}/RECORD", record)
        self.wheel = buf.getvalue()
        self.wheel_name = f"{PY_PKG}-1.0-py3-none-any.whl"

    def _git_repository(self):
        # github.com/srt-recipes/hello.git: two commits (the project's clone is one behind).
        g = ["git", "-c", "user.name=srt", "-c", "user.email=srt@example.invalid",
             "-c", "init.defaultBranch=main"]
        src, bare = self.dir("git-src"), self.dir("git", GIT_REPO + ".git")
        run([*g, "init", "-q", src])
        run([*g, "-C", src, "commit", "-q", "--allow-empty", "-m", "first"])
        run([*g, "-C", src, "commit", "-q", "--allow-empty", "-m", "second"])
        run([*g, "clone", "-q", "--bare", src, bare])
        self.git_bare = bare

    def _apt_suite(self):
        # http://deb.debian.org/debian bookworm main with one package, InRelease signed by a key
        # made here (gpg's agent is stopped in close()).
        root = self.dir("apt", "debian")
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        pkg = self.dir("apt-pkg")
        os.makedirs(f"{pkg}/DEBIAN")
        os.makedirs(f"{pkg}/usr/share/doc/{DEB_PKG}")
        with open(f"{pkg}/DEBIAN/control", "w") as f:
            f.write(f"Package: {DEB_PKG}\nVersion: 1.0-1\nArchitecture: all\n"
                    "Maintainer: srt tests <srt@example.invalid>\n"
                    "Description: srt recipes test package\n")
        with open(f"{pkg}/usr/share/doc/{DEB_PKG}/README", "w") as f:
            f.write("hello from the apt stand-in\n")
        pool = f"{root}/pool/main/s/{DEB_PKG}"
        os.makedirs(pool)
        deb = f"{pool}/{DEB_PKG}_1.0-1_all.deb"
        run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", pkg, deb])
        data = read(deb, "rb")
        control = run(["dpkg-deb", "-f", deb]).stdout.strip()
        packages = (f"{control}\nFilename: pool/main/s/{DEB_PKG}/{DEB_PKG}_1.0-1_all.deb\n"
                    f"Size: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n\n")
        dist = f"{root}/dists/bookworm"
        os.makedirs(f"{dist}/main/binary-{arch}")
        index = {f"main/binary-{arch}/Packages": packages.encode()}
        index[f"main/binary-{arch}/Packages.gz"] = gzip.compress(index[f"main/binary-{arch}/Packages"])
        for rel, blob in index.items():
            with open(f"{dist}/{rel}", "wb") as f:
                f.write(blob)
        release = ("Origin: Debian\nLabel: Debian\nSuite: stable\nCodename: bookworm\n"
                   f"Date: {email.utils.formatdate(time.time() - 60, usegmt=True)}\n"
                   f"Architectures: {arch}\nComponents: main\nSHA256:\n" +
                   "".join(f" {hashlib.sha256(b).hexdigest()} {len(b)} {rel}\n"
                           for rel, b in index.items()))
        with open(f"{dist}/Release", "w") as f:
            f.write(release)
        self.gnupg = self.dir("gnupg")
        os.mkdir(self.gnupg, 0o700)
        genv = {**os.environ, "GNUPGHOME": self.gnupg}
        gpg = ["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""]
        run([*gpg, "--quick-gen-key", "srt recipes test archive key", "ed25519", "sign", "2d"],
            env=genv)
        run([*gpg, "--clearsign", "-o", f"{dist}/InRelease", f"{dist}/Release"], env=genv)
        keyring = self.dir("apt", "archive-key.gpg")
        with open(keyring, "wb") as f:
            f.write(subprocess.run(["gpg", "--batch", "--export"], env=genv, check=True,
                                   capture_output=True).stdout)
        os.chmod(keyring, 0o644)
        self.apt_root = root
        # What APT_CONFIG adds for the test: this suite instead of the host's sources.
        with open(self.dir("apt", "sources.list"), "w") as f:
            f.write(f"deb [signed-by={keyring}] http://deb.debian.org/debian bookworm main\n")
        os.mkdir(self.dir("apt", "sources.list.d"))
        with open(self.dir("apt", "test.conf"), "w") as f:
            f.write(f'Dir::Etc::SourceList "{self.dir("apt", "sources.list")}";\n'
                    f'Dir::Etc::SourceParts "{self.dir("apt", "sources.list.d")}";\n')
        for dirpath, dirs, files in os.walk(self.dir("apt")):
            for n in dirs + files:
                os.chmod(os.path.join(dirpath, n), 0o755 if n in dirs else 0o644)

    def _dnsmasq(self):
        for _ in range(5):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            log = self.dir(f"dnsmasq-{port}.log")
            with open(log, "w") as out:
                p = subprocess.Popen(
                    [tool("dnsmasq"), "--keep-in-foreground", "--conf-file=/dev/null",
                     "--no-resolv", "--no-hosts", "--no-poll", "--pid-file", "--log-facility=-",
                     "--bind-interfaces", "--listen-address=127.0.0.1", f"--port={port}",
                     "--user=root", "--group=root",
                     *[f"--address=/{n}/{self.addr}" for n in NAMES]],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    preexec_fn=die_with_us)
            self.daemons.append(("dnsmasq", p))
            if self._answers(port, p):
                self.dns = f"127.0.0.1:{port}"
                return
        raise RuntimeError("dnsmasq did not start: " + read(log))

    @staticmethod
    def _answers(port, proc):
        query = bytes.fromhex("5e11010000010000000000000667697468756203636f6d0000010001")
        deadline = time.time() + 5
        while time.time() < deadline and proc.poll() is None:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(0.1)
                try:
                    s.sendto(query, ("127.0.0.1", port))
                    if s.recv(512)[:2] == query[:2]:
                        return True
                except OSError:
                    time.sleep(0.05)
        return False

    def _sshd(self):
        d = self.dir("sshd")
        os.mkdir(d)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "github.com", "-f",
             f"{d}/host_key"])
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sandbox", "-f",
             f"{d}/client_key"])
        shutil.copy(f"{d}/client_key.pub", f"{d}/authorized_keys")
        with open(f"{d}/sshd_config", "w") as f:
            f.write(f"ListenAddress {self.addr}:22\nHostKey {d}/host_key\n"
                    f"AuthorizedKeysFile {d}/authorized_keys\nPidFile none\nUsePAM no\n"
                    "StrictModes no\nPermitRootLogin prohibit-password\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                    "LogLevel VERBOSE\n")
        # sshd insists on its privilege-separation directory (ctest serialises the tests that
        # make it: RESOURCE_LOCK run-sshd).
        self.made_run_sshd = not os.path.isdir("/run/sshd")
        if self.made_run_sshd:
            os.mkdir("/run/sshd", 0o755)
        with open(f"{d}/sshd.log", "w") as out:
            p = subprocess.Popen([tool("sshd"), "-D", "-e", "-f", f"{d}/sshd_config"],
                                 stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 preexec_fn=die_with_us)
        self.daemons.append(("sshd", p))
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                socket.create_connection((self.addr, 22), timeout=1).close()
                break
            except OSError:
                if p.poll() is not None:
                    break
                time.sleep(0.05)
        else:
            raise RuntimeError("sshd did not listen: " + read(f"{d}/sshd.log"))
        if p.poll() is not None:
            raise RuntimeError("sshd exited: " + read(f"{d}/sshd.log"))
        self.ssh_dir = d
        with open(f"{d}/host_key.pub") as f:
            self.known_hosts = "github.com " + " ".join(f.read().split()[:2]) + "\n"

    def close(self):
        for s in self.servers:
            s.stop()
        for name, p in self.daemons:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
                try:
                    p.wait(3)
                except subprocess.TimeoutExpired:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait()
        if getattr(self, "gnupg", None) and os.path.isdir(self.gnupg):
            subprocess.run(["gpgconf", "--kill", "all"], env={**os.environ,
                                                              "GNUPGHOME": self.gnupg},
                           capture_output=True)
        if getattr(self, "made_run_sshd", False):
            try:
                os.rmdir("/run/sshd")
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- the stand-in origins --------------------------------------------------------------
    def npm_registry(self, h, url, body):
        tarball = f"https://registry.npmjs.org/{NPM_PKG}/-/{NPM_PKG}-1.0.0.tgz"
        if url.path == f"/{NPM_PKG}":
            integrity = "sha512-" + base64.b64encode(hashlib.sha512(self.npm_tgz).digest()).decode()
            doc = {"name": NPM_PKG, "dist-tags": {"latest": "1.0.0"},
                   "versions": {"1.0.0": {
                       "name": NPM_PKG, "version": "1.0.0", "bin": {NPM_PKG: "cli.js"},
                       "dist": {"tarball": tarball, "integrity": integrity,
                                "shasum": hashlib.sha1(self.npm_tgz).hexdigest()}}}}
            return 200, "application/json", json.dumps(doc).encode(), ()
        if url.path == urllib.parse.urlsplit(tarball).path:
            return 200, "application/octet-stream", self.npm_tgz, ()
        if url.path.startswith("/-/npm/v1/security/"):
            return 200, "application/json", b"{}", ()
        return 404, "application/json", b'{"error":"Not found"}', ()

    def github(self, h, url, body):
        # git's smart HTTP protocol, by git http-backend as a CGI program.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": self.dir("git"),
               "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": url.path, "QUERY_STRING": url.query,
               "REQUEST_METHOD": h.command, "CONTENT_TYPE": h.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": "127.0.0.1",
               "GIT_PROTOCOL": h.headers.get("Git-Protocol", ""),
               "HTTP_CONTENT_ENCODING": h.headers.get("Content-Encoding", "")}
        p = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        sep = b"\r\n\r\n" if b"\r\n\r\n" in p.stdout else b"\n\n"
        head, _, data = p.stdout.partition(sep)
        status, ctype, headers = 200, "text/plain", []
        for line in head.decode().splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k.lower() == "content-type":
                ctype = v.strip()
            elif k.strip():
                headers.append((k.strip(), v.strip()))
        return status, ctype, data, headers

    def pypi(self, h, url, body):
        if url.path == f"/pypi/{PY_PKG}/json":
            digest = hashlib.sha256(self.wheel).hexdigest()
            doc = {"info": {"name": PY_PKG, "version": "1.0"},
                   "urls": [{"filename": self.wheel_name, "packagetype": "bdist_wheel",
                             "url": f"https://files.pythonhosted.org/packages/{digest[:2]}/"
                                    f"{digest[2:4]}/{digest[4:]}/{self.wheel_name}",
                             "digests": {"sha256": digest}}]}
            return 200, "application/json", json.dumps(doc).encode(), ()
        return 404, "application/json", b'{"message": "Not Found"}', ()

    def pythonhosted(self, h, url, body):
        if url.path.endswith("/" + self.wheel_name):
            return 200, "application/octet-stream", self.wheel, ()
        return 404, "text/plain", b"Not Found\n", ()

    def debian(self, h, url, body):
        rel = os.path.normpath(url.path.lstrip("/"))
        if not rel.startswith("debian/") or ".." in rel.split("/"):
            return 404, "text/plain", b"Not Found\n", ()
        path = os.path.join(self.dir("apt"), rel)
        if not os.path.isfile(path):
            return 404, "text/plain", b"Not Found\n", ()
        with open(path, "rb") as f:
            return 200, "application/octet-stream", f.read(), ()

    # --- running srt -------------------------------------------------------------------------
    def settings(self, recipe, tag):
        """docs/recipes/RECIPE.json with the test's resolver and loopback carve-outs."""
        with open(os.path.join(ARGS.src, "docs", "recipes", recipe)) as f:
            s = json.load(f)
        s["network"]["allowedDomains"] += [f"{self.addr}:{p}" for p in (443, 80, 22)]
        s["network"]["dnsServers"] = [self.dns]
        path = self.dir(f"settings-{tag}-{recipe}")
        with open(path, "w") as f:
            json.dump(s, f, indent=2)
        os.chmod(path, 0o644)
        return path

    def identity(self, who):
        """A home and a project directory owned by `who` (root or nobody)."""
        base = self.dir(who)
        if not os.path.isdir(base):
            for d in (base, f"{base}/home", f"{base}/project"):
                os.mkdir(d, 0o755)
            if who != "root":
                pw = pwd.getpwnam(who)
                for d in (base, f"{base}/home", f"{base}/project"):
                    os.chown(d, pw.pw_uid, pw.pw_gid)
        return f"{base}/home", f"{base}/project"

    def host(self, who, argv, cwd=None, env=None):
        """A command on the host (unsandboxed) as `who`: the user's own setup steps."""
        home, project = self.identity(who)
        return run([*as_user(who), *argv], cwd=cwd or project,
                   env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, **(env or {})})

    def srt(self, who, recipe, script, env=None, cwd=None, timeout=90):
        """srt -s <recipe settings> --log-file LOG -c SCRIPT as `who`, in its project."""
        home, project = self.identity(who)
        settings = self.settings(recipe, who)
        log = self.dir(f"{who}-decisions.jsonl")
        if os.path.exists(log):
            os.unlink(log)
        prefix = as_user(who)
        environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
                       "TERM": "dumb", **(env or {})}
        if who != "root":
            open(log, "w").close()
            os.chown(log, pwd.getpwnam(who).pw_uid, pwd.getpwnam(who).pw_gid)
        before = len(self.requests)
        p = subprocess.run([*prefix, ARGS.srt, "-s", settings, "--log-file", log, "-c", script],
                           cwd=cwd or project, env=environment, capture_output=True, text=True,
                           timeout=timeout)
        p.decisions = [json.loads(line) for line in read(log).splitlines() if line.strip()]
        p.requests = self.requests[before:]
        return p

    def trust(self):
        """The environment that makes each client trust the test's CA (the real names have
        public certificates; these stand-ins have the test's)."""
        return {"NODE_EXTRA_CA_CERTS": self.ca, "npm_config_cafile": self.ca, "GIT_SSL_CAINFO": self.ca,
                "SSL_CERT_FILE": self.ca}


WORLD = None
WORLD_PROBLEM = None
IDENTITIES = ("root", "nobody")


def world():
    """The stand-ins, started by the first recipe that needs them (SkipTest if they cannot)."""
    global WORLD, WORLD_PROBLEM
    if WORLD is None and WORLD_PROBLEM is None:
        problems = []
        if os.geteuid() != 0:
            problems.append("needs root (binds ports 443, 80 and 22 on loopback, runs sshd, "
                            "setpriv)")
        problems += [f"{t} is not installed" for t in TOOLS if not tool(t)]
        if not os.access(ARGS.srt, os.X_OK):
            problems.append(f"{ARGS.srt} is not built")
        elif run([ARGS.srt, "-c", "true"], check=False).returncode != 0:
            problems.append("srt sandboxes do not work on this host")
        if problems:
            WORLD_PROBLEM = "; ".join(problems)
        else:
            WORLD = World()
    if WORLD_PROBLEM:
        raise unittest.SkipTest(WORLD_PROBLEM)
    return WORLD


def tearDownModule():
    if WORLD:
        WORLD.close()


def hosts(decisions, decision="allow"):
    return sorted({d["host"] for d in decisions if d["decision"] == decision})


class Recipe(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        world()

    def check(self, p, expect_out=None):
        self.assertEqual(p.returncode, 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        if expect_out is not None:
            self.assertIn(expect_out, p.stdout, p.stderr)


class DocTest(unittest.TestCase):
    """docs/recipes.md shows every settings file as it is and every command the test runs."""

    def test_settings_and_commands_are_in_the_doc(self):
        with open(os.path.join(ARGS.src, "docs", "recipes.md")) as f:
            doc = f.read()
        for name in sorted(os.listdir(os.path.join(ARGS.src, "docs", "recipes"))):
            if name.endswith(".json"):
                with open(os.path.join(ARGS.src, "docs", "recipes", name)) as f:
                    text = f.read()
                self.assertIn("```json\n" + text + "```", doc,
                              f"docs/recipes.md must quote docs/recipes/{name} whole")
        ex = DOC_EXAMPLES
        for command in (NPM_INSTALL.format(pkg=ex["npm"]), NPX_RUN.format(pkg=ex["npm"]),
                        PY_FETCH.format(pkg=ex["py"]), GIT_HTTPS_CLONE.format(repo=ex["repo"]),
                        GIT_SSH, APT_OPTS, APT_RUN.format(pkg=ex["deb"])):
            self.assertIn(command, doc)


class NpmTest(Recipe):
    def test_npm_install_and_npx(self):
        WORLD.need("npm")
        for who in IDENTITIES:
            with self.subTest(who=who):
                home, project = WORLD.identity(who)
                WORLD.host(who, ["mkdir", "-p", f"{home}/.npm", f"{project}/npm"])
                p = WORLD.srt(who, "npm.json",
                              NPM_INSTALL.format(pkg=NPM_PKG) + " && npx " + NPM_PKG + " && " +
                              NPX_RUN.format(pkg=NPM_PKG), env=WORLD.trust(),
                              cwd=f"{project}/npm")
                self.check(p)
                self.assertEqual(p.stdout.count(f"hello from {NPM_PKG}"), 2, p.stdout)
                self.assertTrue(os.path.isfile(f"{project}/npm/node_modules/{NPM_PKG}/cli.js"))
                self.assertEqual(hosts(p.decisions), ["registry.npmjs.org"], p.decisions)
                self.assertEqual({r.host for r in p.requests}, {"registry.npmjs.org"})
                # A registry the settings do not name (an .npmrc pointing at a mirror).
                p = WORLD.srt(who, "npm.json", "npm install --registry "
                              "https://registry.yarnpkg.com/ left-pad --fetch-retries=0",
                              env=WORLD.trust(), cwd=f"{project}/npm")
                self.assertNotEqual(p.returncode, 0)
                self.assertIn("srt: network: denied registry.yarnpkg.com:443 "
                              "(host is not on the allow list)", p.stderr)
                self.assertIn("403", p.stderr)


class PythonTest(Recipe):
    def test_fetch_a_wheel_without_pip(self):
        WORLD.need("wheel")
        for who in IDENTITIES:
            with self.subTest(who=who):
                home, project = WORLD.identity(who)
                WORLD.host(who, ["mkdir", "-p", f"{project}/py"])
                shutil.copy(os.path.join(ARGS.src, "docs", "recipes", "fetch_wheel.py"),
                            f"{project}/py/fetch_wheel.py")
                os.chmod(f"{project}/py/fetch_wheel.py", 0o644)
                p = WORLD.srt(who, "python.json", PY_FETCH.format(pkg=PY_PKG) +
                              f" && PYTHONPATH=vendor python3 -c 'import {PY_PKG}; "
                              f"print({PY_PKG}.GREETING)'", env=WORLD.trust(),
                              cwd=f"{project}/py")
                self.check(p, f"hello from {PY_PKG}")
                self.assertEqual(hosts(p.decisions), ["files.pythonhosted.org", "pypi.org"])
                # A host the settings do not name.
                p = WORLD.srt(who, "python.json",
                              "python3 -c 'import urllib.request; "
                              "urllib.request.urlopen(\"https://github.com/\", timeout=10)'",
                              env=WORLD.trust(), cwd=f"{project}/py")
                self.assertNotEqual(p.returncode, 0)
                self.assertIn("Tunnel connection failed: 403 host is not on the allow list",
                              p.stderr)


class GitTest(Recipe):
    def _project_clone(self, who, url):
        """The user's own clone in the project (made on the host, at the first commit)."""
        home, project = WORLD.identity(who)
        clone = f"{project}/hello"
        if not os.path.isdir(clone):
            run(["git", "clone", "-q", WORLD.git_bare, clone])
            if who != "root":
                run(["chown", "-R", f"{who}:", clone])
        WORLD.host(who, ["git", "-C", clone, "reset", "-q", "--hard", "origin/main~1"])
        WORLD.host(who, ["git", "-C", clone, "remote", "set-url", "origin", url])
        return project

    def test_https(self):
        WORLD.need("git")
        url = f"https://github.com/{GIT_REPO}.git"
        for who in IDENTITIES:
            with self.subTest(who=who):
                project = self._project_clone(who, url)
                p = WORLD.srt(who, "git.json",
                              GIT_HTTPS_CLONE.format(repo=GIT_REPO) +
                              ' && git -C "$TMPDIR/repo" log -1 --format=%s'
                              " && git -C hello pull -q --ff-only && git -C hello log -1 "
                              "--format=%s", env=WORLD.trust())
                self.check(p)
                self.assertEqual(p.stdout.split(), ["second", "second"], p.stderr)
                self.assertEqual(hosts(p.decisions), ["github.com"])
                # A clone into the project: the write guard refuses the new repository.
                p = WORLD.srt(who, "git.json", f"git clone -q {url} fresh", env=WORLD.trust())
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(f"{project}/fresh/.git: Operation not permitted", p.stderr)
                self.assertFalse(os.path.exists(f"{project}/fresh/.git"))

    def test_ssh(self):
        WORLD.need("git", "sshd")
        for who in IDENTITIES:
            with self.subTest(who=who):
                home, project = WORLD.identity(who)
                url = f"ssh://root@github.com{WORLD.git_bare}"
                self._project_clone(who, url)
                WORLD.host(who, ["mkdir", "-p", f"{home}/.ssh"])
                WORLD.host(who, ["chmod", "700", f"{home}/.ssh"])
                for src, dst in ((f"{WORLD.ssh_dir}/client_key", "id_ed25519_sandbox"),
                                 (f"{WORLD.ssh_dir}/client_key", "id_ed25519")):
                    shutil.copy(src, f"{home}/.ssh/{dst}")
                with open(f"{home}/.ssh/known_hosts", "w") as f:
                    f.write(WORLD.known_hosts)
                if who != "root":
                    pw = pwd.getpwnam(who)
                    for n in os.listdir(f"{home}/.ssh"):
                        os.chown(f"{home}/.ssh/{n}", pw.pw_uid, pw.pw_gid)
                p = WORLD.srt(who, "git.json",
                              GIT_SSH + f' git clone -q {url} "$TMPDIR/repo"'
                              ' && git -C "$TMPDIR/repo" log -1 --format=%s && ' + GIT_SSH +
                              " git -C hello pull -q --ff-only && git -C hello log -1 "
                              "--format=%s; test -r ~/.ssh/id_ed25519; echo other-key=$?")
                self.check(p)
                self.assertEqual(p.stdout.split(), ["second", "second", "other-key=1"],
                                 p.stderr + read(f"{WORLD.ssh_dir}/sshd.log"))
                tunnels = [d for d in p.decisions if d["host"] == "github.com"]
                self.assertEqual([(d["protocol"], d["port"], d["decision"]) for d in tunnels],
                                 [("connect", 22, "allow")] * 2)
                # Another forge over ssh.
                p = WORLD.srt(who, "git.json",
                              GIT_SSH + " git ls-remote ssh://git@gitlab.com/x/y.git")
                self.assertEqual(p.returncode, 128, p.stderr)
                self.assertIn("srt-init connect: the proxy refused the tunnel: HTTP/1.1 403 host "
                              "is not on the allow list", p.stderr)


class AptTest(Recipe):
    def test_update_and_download(self):
        WORLD.need("apt")
        for who in IDENTITIES:
            with self.subTest(who=who):
                home, project = WORLD.identity(who)
                WORLD.host(who, ["mkdir", "-p", f"{project}/.apt/lists/partial",
                                 f"{project}/.apt/cache/archives/partial"])
                env = {"APT_CONFIG": WORLD.dir("apt", "test.conf")}
                p = WORLD.srt(who, "apt.json", APT_OPTS + "; " + APT_RUN.format(pkg=DEB_PKG),
                              env=env)
                self.check(p)
                self.assertTrue(os.path.isfile(f"{project}/{DEB_PKG}_1.0-1_all.deb"), p.stdout)
                self.assertEqual(hosts(p.decisions), ["deb.debian.org"])
                self.assertIn("InRelease", " ".join(r.path for r in p.requests))
                if who == "root":
                    # Without APT::Sandbox::User=root apt cannot drop to _apt.
                    p = WORLD.srt(who, "apt.json", "apt-get -o Dir::State::Lists=$PWD/.apt/lists"
                                  " -o Dir::Cache=$PWD/.apt/cache update", env=env)
                    self.assertIn("E: seteuid 42 failed", p.stderr + p.stdout)


class McpMemoryTest(Recipe):
    SERVER = "@modelcontextprotocol/server-memory/dist/index.js"

    def _exchange(self, who, env):
        script = os.path.join(ARGS.node_modules, self.SERVER)
        if not os.path.isfile(script):
            if must_work():
                self.fail(f"{script} is not installed (npm ci --prefix tests/mcp)")
            self.skipTest(f"{script} is not installed (npm ci --prefix tests/mcp)")
        msgs = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "srt-recipes-test", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "create_entities", "arguments": {"entities": [
                 {"name": "srt", "entityType": "tool", "observations": ["runs in a sandbox"]}]}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "read_graph", "arguments": {}}},
        ]
        home, project = WORLD.identity(who)
        settings = WORLD.settings("mcp-memory.json", who)
        prefix = as_user(who)
        proc = subprocess.Popen([*prefix, ARGS.srt, "-s", settings, "node", script],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=project, text=True,
                                env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home,
                                     **env})
        replies = {}
        try:
            for m in msgs:
                if proc.poll() is not None:
                    break
                proc.stdin.write(json.dumps(m) + "\n")
                proc.stdin.flush()
                if "id" in m:
                    while True:
                        line = proc.stdout.readline()
                        if not line:
                            break
                        reply = json.loads(line)
                        if reply.get("id") == m["id"]:
                            replies[m["id"]] = reply
                            break
            proc.stdin.close()
            proc.wait(20)
        except BrokenPipeError:
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        err = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        return replies, err

    def test_server_memory_keeps_its_graph_in_the_allowed_directory(self):
        for who in IDENTITIES:
            with self.subTest(who=who):
                home, project = WORLD.identity(who)
                WORLD.host(who, ["mkdir", "-p", f"{home}/.local/share/mcp-memory", f"{home}/.npm"])
                memory = f"{home}/.local/share/mcp-memory/memory.jsonl"
                replies, err = self._exchange(who, {"MEMORY_FILE_PATH": memory})
                self.assertIn(1, replies, err)
                self.assertEqual(replies[1]["result"]["serverInfo"]["name"], "memory-server", err)
                self.assertNotIn("isError", replies[2]["result"], replies[2])
                self.assertIn("runs in a sandbox", json.dumps(replies[3]["result"]))
                self.assertIn("runs in a sandbox", read(memory))
                # Without MEMORY_FILE_PATH it writes next to its own code, which is read-only.
                replies, err = self._exchange(who, {})
                self.assertTrue(replies[2]["result"].get("isError") or "error" in replies[2],
                                replies[2])
                self.assertIn("EROFS", json.dumps(replies[2]), replies[2])


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--srt", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--node-modules")
    ARGS, rest = parser.parse_known_args()
    ARGS.srt, ARGS.src = os.path.abspath(ARGS.srt), os.path.abspath(ARGS.src)
    ARGS.node_modules = ARGS.node_modules or os.environ.get("SRT_MCP_NODE_MODULES") or \
        os.path.join(ARGS.src, "tests", "mcp", "node_modules")
    result = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2).result
    if not result.wasSuccessful():
        return 1
    if result.skipped and len(result.skipped) == result.testsRun:
        return 1 if must_work() else SKIP
    if result.skipped and must_work():
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
