#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fake_control_plane.py: a loopback fake of the Managed Agents control plane for srt-poller tests.

It serves, under /v1, the self-hosted work queue (poll, ack, heartbeat, stop, get, list,
metadata, stats), sessions (get, paged event history, posting events, the SSE event stream),
skill versions (list, get, content) and memory stores (list, get, create, update, delete), with
the auth and header rules of shared/reference/work-queue-protocol.md §2.1-§2.7. Tests script it
through a JSON control API under /_fake/ (no auth) and assert on the requests it recorded.

Usage:
  fake_control_plane.py [--host 127.0.0.1] [--port 0] [--ready-fd N]
                        [--tls-cert PEM --tls-key PEM] [--env-id ID] [--env-key KEY]
                        [--ttl-seconds N] [--ping-interval S] [--stdin-watch auto|on|off] [-v]

Once listening it prints "READY <port> <control_port>" on stdout (and on --ready-fd if given).
Without TLS both are the same port. With TLS, <port> speaks HTTPS and <control_port> is a
plain-HTTP listener that serves only /_fake/ (so a test harness needs no TLS client).
It exits on SIGTERM/SIGINT and when stdin reaches EOF (--stdin-watch auto: only when stdin is a
pipe or socket, so a harness that dies takes the fake with it).

Behaviour (shared/reference/work-queue-protocol.md):
  * Every /v1 request needs anthropic-version and anthropic-beta (else 400), must not carry
    x-api-key (400, "dual auth"), and needs "Authorization: Bearer" with the environment key, or
    with a sessions token for that token's own work item and session and for skills (else 401
    with {"type":"error","error":{"type":"authentication_error",...}}). poll, stats and list
    need the environment key. Memory stores refuse the environment key (401) and take a sessions
    token only when its session has a resource {"type": "memory_store", "memory_store_id": ID}
    for that store (else 403 permission_error).
  * poll: block_ms 1..999 (larger is capped; 0 is 400); reclaim_older_than_ms (default 5000)
    re-delivers delivered-but-unacked items. Empty: 204 (config empty_poll: "null" | "empty").
    The item carries secret = base64url(JSON {"sessions_token": ...}); it is null elsewhere.
  * ack: state queued -> starting. heartbeat: expected_last_heartbeat required (NO_HEARTBEAT
    first, then the last answer's last_heartbeat, else 412); starting -> active.
  * stop {force}: 204; 409 once stopped. Graceful on an active item -> stopping (heartbeats
    report it); a stop of a stopping item, or force, -> stopped. A stopping item with no
    heartbeat for ttl_seconds becomes stopped by itself.
  * POST /v1/sessions/{id}/events: only user.* events; tool results must name an agent.tool_use
    (agent.custom_tool_use) of the session (config strict_results). Stored events get id and
    processed_at, join the history, go to live streams, and are listed under /results.
  * events/stream: SSE ("event: <type>", "id: <id>", "data: <json>"), chunked, only events
    appended after connect (config stream_replay, or ?_replay=1, replays the history first);
    "event: ping" every ping_interval seconds.
  * Memory stores (/v1/memory_stores/{store}/memories[/{id}]; endpoints memory_list, memory_get,
    memory_create, memory_update, memory_delete). A memory is {type: "memory", id: "mem_...",
    memory_store_id, path, content (null in view=basic), content_sha256 (hex of the UTF-8
    bytes), content_size_bytes, memory_version_id ("memver_...", new on every change),
    created_at, updated_at}. An unknown store or memory is 404.
    - GET .../memories?view=basic|full&limit=N&page=P&path_prefix=/x/: {data, next_page}, in
      path order; limit 1..100 (default 20; at most 20 with view=full); path_prefix ends in
      '/'; depth is ignored. Default view basic.
    - GET .../memories/{id}?view=: one memory, default view full.
    - POST .../memories {path, content} (?view=, default basic): 409 if the path is taken, or
      once the store holds 2000 memories. Paths start with '/', have no empty, '.' or '..'
      segments and no control characters, and are at most 1024 bytes; content ("" allowed)
      is at most 102400 bytes (else 400).
    - POST .../memories/{id} {content?, path?, precondition?: {type: "content_sha256",
      content_sha256}}: update and/or rename (basic view). A precondition that does not match
      is 409 memory_precondition_failed_error, unless the memory already has the asked content
      and path (then 200, unchanged).
    - DELETE .../memories/{id}?expected_content_sha256=H: {id, type: "memory_deleted"}; 409
      memory_precondition_failed_error if H does not match.

Control API (JSON, no auth; with TLS also on the plain control port):
  GET  /_fake/health                      {"ok": true, "env_id", "pid"}
  POST /_fake/reset                       forget everything (streams end)
  GET|POST /_fake/config                  {empty_poll, stream_replay, skills_accept_sessions_token,
                                           session_accepts_env_key, strict_results, ttl_seconds,
                                           ping_interval}
  POST /_fake/work                        {session_id?, data_type: session|healthcheck,
                                           with_secret: true, sessions_token?, work_id?,
                                           api_base_url?, metadata?} -> item view
  GET  /_fake/work, /_fake/work/{id}      item view: work object + sessions_token,
                                           last_heartbeat, heartbeats, deliveries, acks, stops
  POST /_fake/work/{id}/steal             another worker took the lease (next heartbeat: 412)
  POST /_fake/stop_work                   {work_id, force} operator stop (409 if stopped)
  POST /_fake/sessions                    {id, skills: [{skill_id, version}], metadata,
                                           resources, tools, status}
  GET  /_fake/sessions/{id}               session + streams (live count), events, results
  GET|POST /_fake/sessions/{id}/events    history / append {"events": [...]} (or one event)
  GET  /_fake/sessions/{id}/results       [{time, event, duplicate, auth, request_seq}];
                                          ?wait_count=N&timeout_ms=T waits for N results
  POST /_fake/sessions/{id}/drop_streams  {abrupt} end live streams now
  POST /_fake/sessions/{id}/stream_error  {error?} send an SSE error event
  GET|DELETE /_fake/requests              recorded /v1 requests; filters endpoint, method,
                                           session, work, path_re, since (seq); each
                                           names its connection ("conn", from 1)
  GET|POST|DELETE /_fake/faults           {endpoint?, method?, path? (regex), session?, work?,
                                           kind: status|drop|delay|stream_drop, status, count
                                           (-1 forever), skip, delay_ms, retry_after, headers,
                                           body, message, after_events, abrupt}
  POST /_fake/skills                      {skill_id, version, name, format: tar.gz|tar.bz2|tar|zip,
                                           top_dir, files: {path: {content|content_b64, mode}},
                                           members: [{name, type: file|dir|symlink|hardlink|fifo,
                                           content, target, mode}]}
  POST /_fake/memory_stores               {id, memories: {path: content}, validate: true}
                                           creates or replaces a store (validate false: seed
                                           paths the server would refuse) -> the store view
  GET  /_fake/memory_stores/{id}          {id, memories: [full memory objects, path order]}

Python 3.11 standard library only.
"""

import argparse
import base64
import hashlib
import io
import itertools
import json
import os
import re
import secrets
import signal
import socket
import ssl
import stat
import sys
import tarfile
import threading
import time
import urllib.parse
import zipfile
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NO_HEARTBEAT = "NO_HEARTBEAT"
MAX_BLOCK_MS = 999
DEFAULT_RECLAIM_MS = 5000
MAX_BODY = 64 * 1024 * 1024
MAX_PAGE = 1000
MEMORY_PAGE = 20  # default limit of a memory list
MAX_MEMORY_PAGE = 100
MAX_MEMORY_PAGE_FULL = 20  # full pages carry the content, so they are smaller
MAX_MEMORY_PATH = 1024  # bytes of UTF-8
MAX_MEMORY_CONTENT = 100 * 1024  # bytes of UTF-8
MAX_MEMORIES = 2000  # per store

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "invalid_request_error",
    412: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "api_error",
    529: "overloaded_error",
}

USER_EVENT_TYPES = {
    "user.message",
    "user.interrupt",
    "user.tool_confirmation",
    "user.custom_tool_result",
    "user.tool_result",
    "user.define_outcome",
}

# (name, method, regex on the path). The first match names a request's endpoint in the log and
# in fault patterns.
ROUTES = [
    ("poll", "GET", r"/v1/environments/(?P<env>[^/]+)/work/poll"),
    ("stats", "GET", r"/v1/environments/(?P<env>[^/]+)/work/stats"),
    ("ack", "POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)/ack"),
    ("heartbeat", "POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)/heartbeat"),
    ("stop", "POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)/stop"),
    ("work_get", "GET", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)"),
    ("work_update", "POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)"),
    ("work_list", "GET", r"/v1/environments/(?P<env>[^/]+)/work"),
    ("session_get", "GET", r"/v1/sessions/(?P<session>[^/]+)"),
    ("events_list", "GET", r"/v1/sessions/(?P<session>[^/]+)/events"),
    ("events_post", "POST", r"/v1/sessions/(?P<session>[^/]+)/events"),
    ("stream", "GET", r"/v1/sessions/(?P<session>[^/]+)/events/stream"),
    ("skill_versions", "GET", r"/v1/skills/(?P<skill>[^/]+)/versions"),
    ("skill_version", "GET", r"/v1/skills/(?P<skill>[^/]+)/versions/(?P<version>[^/]+)"),
    ("skill_content", "GET", r"/v1/skills/(?P<skill>[^/]+)/versions/(?P<version>[^/]+)/content"),
    ("memory_list", "GET", r"/v1/memory_stores/(?P<store>[^/]+)/memories"),
    ("memory_create", "POST", r"/v1/memory_stores/(?P<store>[^/]+)/memories"),
    ("memory_get", "GET", r"/v1/memory_stores/(?P<store>[^/]+)/memories/(?P<memory>[^/]+)"),
    ("memory_update", "POST", r"/v1/memory_stores/(?P<store>[^/]+)/memories/(?P<memory>[^/]+)"),
    ("memory_delete", "DELETE", r"/v1/memory_stores/(?P<store>[^/]+)/memories/(?P<memory>[^/]+)"),
]
ROUTES = [(n, m, re.compile(p)) for n, m, p in ROUTES]


def now_rfc3339():
    # Microseconds make every heartbeat's last_heartbeat distinct, so an echo bug shows.
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def api_error(status, message, etype=None):
    return {"type": "error", "error": {"type": etype or ERROR_TYPES.get(status, "api_error"),
                                       "message": message}}


class ApiError(Exception):
    def __init__(self, status, message, etype=None):
        super().__init__(message)
        self.status = status
        self.body = api_error(status, message, etype)


class Fault:
    """The next `count` requests matching (endpoint|path regex, method) get a scripted answer."""

    def __init__(self, fid, spec):
        self.id = fid
        self.spec = spec
        self.endpoint = spec.get("endpoint")
        self.method = spec.get("method")
        self.path = re.compile(spec["path"]) if spec.get("path") else None
        self.session = spec.get("session")
        self.work = spec.get("work")
        self.skip = int(spec.get("skip", 0))  # let this many matches through first
        self.count = int(spec.get("count", 1))  # -1: forever
        self.kind = spec.get("kind", "status")  # status | drop | delay | stream_drop
        self.hits = 0

    def matches(self, method, path, endpoint, params):
        if self.count == 0:
            return False
        if self.method and self.method.upper() != method:
            return False
        if self.endpoint and self.endpoint != endpoint:
            return False
        if self.path and not self.path.search(path):
            return False
        if self.session and params.get("session") != self.session:
            return False
        if self.work and params.get("work") != self.work:
            return False
        return True

    def view(self):
        d = dict(self.spec)
        d.update({"id": self.id, "remaining": self.count, "hits": self.hits})
        return d


class Stream:
    """One live SSE connection of a session."""

    def __init__(self, sid, session_id, drop_after):
        self.id = sid
        self.session_id = session_id
        self.events = []  # pending frames (event dicts or control tuples)
        self.sent = 0
        self.drop_after = drop_after  # close after this many events, or None
        self.abrupt = False
        self.closed = False


class State:
    def __init__(self, args):
        self.lock = threading.Condition()
        self.env_id = args.env_id
        self.env_key = args.env_key
        self.default_ttl = args.ttl_seconds
        self.ping_interval = args.ping_interval
        self.reset()

    def reset(self):
        self.counter = 0
        self.work = {}  # id -> dict (internal record)
        self.queue = []  # work ids in enqueue order
        self.sessions = {}  # id -> dict
        self.tokens = {}  # sessions token -> work id
        self.skills = {}  # skill id -> {version -> record}
        self.memory_stores = {}  # store id -> {"id", "memories": {memory id -> record}}
        self.requests = []
        self.faults = []
        self.streams = {}  # stream id -> Stream
        self.stream_faults = []  # pending stream drop specs
        self.workers = {}  # worker id -> last poll time
        self.config = {
            "empty_poll": "204",  # 204 | null | empty
            "stream_replay": False,  # replay the whole history on connect
            "skills_accept_sessions_token": True,
            "session_accepts_env_key": True,
            "ttl_seconds": self.default_ttl,
            "ping_interval": self.ping_interval,
            "strict_results": True,  # 400 on a result for an unknown tool_use id
        }

    def next_id(self, prefix):
        self.counter += 1
        return "%s_%04d%s" % (prefix, self.counter, secrets.token_hex(4))


STATE = None


# ---------------------------------------------------------------------------------------------
# Work items


def new_work(st, spec):
    session_id = spec.get("session_id") or spec.get("session") or st.next_id("sesn")
    data_type = spec.get("data_type", "session")
    wid = spec.get("work_id") or st.next_id("work")
    if wid in st.work:
        raise ApiError(409, "work %r already exists" % wid)
    token = None
    if spec.get("with_secret", True) and data_type == "session":
        token = spec.get("sessions_token") or "sk-ant-req-fake-" + secrets.token_hex(12)
        st.tokens[token] = wid
    secret_obj = None
    if token is not None:
        secret_obj = {"sessions_token": token}
        if spec.get("api_base_url"):
            secret_obj["api_base_url"] = spec["api_base_url"]
    rec = {
        "id": wid,
        "session_id": session_id,
        "data_type": data_type,
        "state": "queued",
        "created_at": now_rfc3339(),
        "acknowledged_at": None,
        "started_at": None,
        "latest_heartbeat_at": None,
        "stop_requested_at": None,
        "stopped_at": None,
        "metadata": dict(spec.get("metadata") or {}),
        "secret": b64url(json.dumps(secret_obj).encode()) if secret_obj else None,
        "sessions_token": token,
        "last_heartbeat": None,
        "heartbeats": [],
        "deliveries": [],
        "acks": 0,
        "stops": [],
        "delivered_at": None,
    }
    st.work[wid] = rec
    st.queue.append(wid)
    if data_type == "session":
        ensure_session(st, session_id)
    st.lock.notify_all()
    return rec


def work_view(st, rec, with_secret=False):
    expire_lease(st, rec)
    return {
        "type": "work",
        "id": rec["id"],
        "environment_id": st.env_id,
        "data": {"type": rec["data_type"], "id": rec["session_id"]},
        "state": rec["state"],
        "created_at": rec["created_at"],
        "acknowledged_at": rec["acknowledged_at"],
        "started_at": rec["started_at"],
        "latest_heartbeat_at": rec["latest_heartbeat_at"],
        "stop_requested_at": rec["stop_requested_at"],
        "stopped_at": rec["stopped_at"],
        "metadata": rec["metadata"],
        "secret": rec["secret"] if with_secret else None,
    }


def expire_lease(st, rec):
    """A stopping item whose worker stopped heartbeating for a TTL becomes stopped (server side)."""
    if rec["state"] != "stopping":
        return
    ttl = st.config["ttl_seconds"]
    last = rec["latest_heartbeat_at"] or rec["stop_requested_at"]
    if last and time.time() - parse_rfc3339(last) > ttl:
        rec["state"] = "stopped"
        rec["stopped_at"] = now_rfc3339()


def claimable(rec, reclaim_ms, now):
    if rec["state"] != "queued" or rec["acknowledged_at"]:
        return False
    if rec["delivered_at"] is None:
        return True
    return (now - rec["delivered_at"]) * 1000 >= reclaim_ms


def fake_work_view(st, rec):
    v = work_view(st, rec, with_secret=True)
    v.update({
        "sessions_token": rec["sessions_token"],
        "last_heartbeat": rec["last_heartbeat"],
        "heartbeats": rec["heartbeats"],
        "deliveries": rec["deliveries"],
        "acks": rec["acks"],
        "stops": rec["stops"],
    })
    return v


# ---------------------------------------------------------------------------------------------
# Sessions and events


def ensure_session(st, sid, spec=None):
    s = st.sessions.get(sid)
    if s is None:
        s = {"id": sid, "events": [], "results": [], "skills": [], "metadata": {},
             "resources": [], "status": "idle", "created_at": now_rfc3339(), "tools": None}
        st.sessions[sid] = s
    if spec:
        for key in ("skills", "metadata", "resources", "status", "tools"):
            if key in spec:
                s[key] = spec[key]
    return s


def session_view(st, s):
    return {
        "type": "session",
        "id": s["id"],
        "status": s["status"],
        "environment_id": st.env_id,
        "created_at": s["created_at"],
        "updated_at": s["created_at"],
        "metadata": s["metadata"],
        "resources": s["resources"],
        "agent": {
            "type": "agent",
            "id": "agent_fake",
            "version": 1,
            "name": "fake agent",
            "skills": [dict({"type": "custom"}, **sk) for sk in s["skills"]],
            "tools": s["tools"] if s["tools"] is not None
            else [{"type": "agent_toolset_20260401"}],
        },
    }


def append_events(st, s, events):
    """Stores events (adding id and processed_at), feeds live streams; returns the stored ones."""
    stored = []
    for ev in events:
        if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
            raise ApiError(400, "each event needs a string 'type'")
        ev = dict(ev)
        ev.setdefault("id", st.next_id("sevt"))
        ev.setdefault("processed_at", now_rfc3339())
        s["events"].append(ev)
        stored.append(ev)
        if ev["type"] == "session.status_idle":
            s["status"] = "idle"
        elif ev["type"] == "session.status_running":
            s["status"] = "running"
        elif ev["type"] in ("session.status_terminated", "session.deleted"):
            s["status"] = "terminated"
        for stream in st.streams.values():
            if stream.session_id == s["id"] and not stream.closed:
                stream.events.append(ev)
    st.lock.notify_all()
    return stored


def validate_user_event(s, ev):
    t = ev.get("type")
    if t not in USER_EVENT_TYPES:
        raise ApiError(400, "events: %r cannot be sent by a client" % t)
    if t in ("user.tool_result", "user.custom_tool_result"):
        key = "tool_use_id" if t == "user.tool_result" else "custom_tool_use_id"
        want = "agent.tool_use" if t == "user.tool_result" else "agent.custom_tool_use"
        if not isinstance(ev.get(key), str):
            raise ApiError(400, "%s: %s is required" % (t, key))
        if "content" in ev and not isinstance(ev["content"], list):
            raise ApiError(400, "%s: content must be a list of blocks" % t)
        if "is_error" in ev and not isinstance(ev["is_error"], bool):
            raise ApiError(400, "%s: is_error must be a boolean" % t)
        return key, want
    if t == "user.tool_confirmation":
        if not isinstance(ev.get("tool_use_id"), str) or ev.get("result") not in ("allow", "deny"):
            raise ApiError(400, "user.tool_confirmation needs tool_use_id and result allow|deny")
    return None, None


# ---------------------------------------------------------------------------------------------
# Skills


def build_archive(spec):
    fmt = spec.get("format", "tar.gz")
    top = spec.get("top_dir") or ""
    members = []
    for path, f in (spec.get("files") or {}).items():
        if isinstance(f, str):
            f = {"content": f}
        members.append({"name": (top + "/" + path) if top else path, "type": "file",
                        "content": f.get("content", ""), "content_b64": f.get("content_b64"),
                        "mode": f.get("mode", 0o644)})
    members.extend(spec.get("members") or [])
    for m in members:
        mode = m.get("mode", 0o644)
        m["mode"] = int(mode, 8) if isinstance(mode, str) else int(mode)
        if m.get("content_b64"):
            m["data"] = base64.b64decode(m["content_b64"])
        else:
            m["data"] = (m.get("content") or "").encode()
    buf = io.BytesIO()
    if fmt == "zip":
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for m in members:
                t = m.get("type", "file")
                zi = zipfile.ZipInfo(m["name"], date_time=(2026, 1, 1, 0, 0, 0))
                zi.create_system = 3  # unix, so external_attr carries the mode
                if t == "dir":
                    if not zi.filename.endswith("/"):
                        zi.filename += "/"
                    zi.external_attr = ((stat.S_IFDIR | (m["mode"] or 0o755)) << 16) | 0x10
                    z.writestr(zi, b"")
                elif t == "symlink":
                    zi.external_attr = (stat.S_IFLNK | 0o777) << 16
                    z.writestr(zi, m.get("target", "").encode())
                else:
                    zi.external_attr = (stat.S_IFREG | m["mode"]) << 16
                    zi.compress_type = zipfile.ZIP_DEFLATED
                    z.writestr(zi, m["data"])
        ctype = "application/zip"
    else:
        mode = {"tar.gz": "w:gz", "tgz": "w:gz", "tar": "w", "tar.bz2": "w:bz2"}.get(fmt)
        if mode is None:
            raise ApiError(400, "format must be tar.gz, tar.bz2, tar or zip, not %r" % fmt)
        with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tf:
            for m in members:
                t = m.get("type", "file")
                ti = tarfile.TarInfo(m["name"])
                ti.mtime = 1767225600
                ti.mode = m["mode"]
                if t == "dir":
                    ti.type = tarfile.DIRTYPE
                    ti.mode = m.get("mode") or 0o755
                    tf.addfile(ti)
                elif t == "symlink":
                    ti.type = tarfile.SYMTYPE
                    ti.linkname = m.get("target", "")
                    ti.mode = 0o777
                    tf.addfile(ti)
                elif t == "hardlink":
                    ti.type = tarfile.LNKTYPE
                    ti.linkname = m.get("target", "")
                    tf.addfile(ti)
                elif t in ("fifo", "chardev"):
                    ti.type = tarfile.FIFOTYPE if t == "fifo" else tarfile.CHRTYPE
                    tf.addfile(ti)
                else:
                    ti.size = len(m["data"])
                    tf.addfile(ti, io.BytesIO(m["data"]))
        ctype = {"w:gz": "application/gzip", "w:bz2": "application/x-bzip2"}.get(
            mode, "application/x-tar")
    return buf.getvalue(), ctype


def skill_version_view(rec):
    return {k: rec[k] for k in ("type", "id", "skill_id", "version", "name", "description",
                                "directory", "created_at")}


# ---------------------------------------------------------------------------------------------
# Memory stores


def utf8_size(what, text):
    try:
        return len(text.encode())
    except UnicodeEncodeError:  # a lone surrogate from a JSON \ud800 escape
        raise ApiError(400, "%s is not valid UTF-8" % what)


def check_memory_path(path):
    """The server's path rules; a 400 names the first one broken."""
    if not isinstance(path, str):
        raise ApiError(400, "path: a string is required")
    if not path.startswith("/"):
        raise ApiError(400, "path %r must start with '/'" % path)
    n = utf8_size("path", path)
    if n > MAX_MEMORY_PATH:
        raise ApiError(400, "path is %d bytes; at most %d are allowed" % (n, MAX_MEMORY_PATH))
    if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in path):
        raise ApiError(400, "path %r contains a control character" % path)
    segments = path[1:].split("/")
    if segments == [""]:
        raise ApiError(400, "path %r needs at least one non-empty segment" % path)
    for seg in segments:
        if not seg:
            raise ApiError(400, "path %r has an empty segment" % path)
        if seg in (".", ".."):
            raise ApiError(400, "path %r has a %r segment" % (path, seg))


def check_memory_content(content):
    if not isinstance(content, str):
        raise ApiError(400, "content: a string is required (\"\" for an empty memory)")
    n = utf8_size("content", content)
    if n > MAX_MEMORY_CONTENT:
        raise ApiError(400, "content is %d bytes; at most %d are allowed"
                       % (n, MAX_MEMORY_CONTENT))


def set_memory(st, m, path, content, stamp=None):
    """Gives a memory its path and content, and a new version."""
    data = content.encode("utf-8", "surrogatepass")  # unchecked seeds may hold anything
    m.update({"path": path, "content": content,
              "content_sha256": hashlib.sha256(data).hexdigest(),
              "content_size_bytes": len(data), "memory_version_id": st.next_id("memver"),
              "updated_at": stamp or now_rfc3339()})


def new_memory(st, store, path, content):
    stamp = now_rfc3339()
    m = {"id": st.next_id("mem"), "created_at": stamp}
    set_memory(st, m, path, content, stamp)
    store["memories"][m["id"]] = m
    return m


def memory_at(store, path):
    return next((m for m in store["memories"].values() if m["path"] == path), None)


def memories_in_order(store):
    return sorted(store["memories"].values(), key=lambda m: m["path"])


def memory_view(store, m, view):
    return {
        "type": "memory",
        "id": m["id"],
        "memory_store_id": store["id"],
        "path": m["path"],
        "content": m["content"] if view == "full" else None,
        "content_sha256": m["content_sha256"],
        "content_size_bytes": m["content_size_bytes"],
        "memory_version_id": m["memory_version_id"],
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
    }


def memory_store_view(store):
    return {"id": store["id"],
            "memories": [memory_view(store, m, "full") for m in memories_in_order(store)]}


def memory_view_param(query, default):
    view = q1(query, "view", default)
    if view not in ("basic", "full"):
        raise ApiError(400, "view must be basic or full, not %r" % view)
    return view


def memory_request(body):
    try:
        req = json.loads(body) if body.strip() else None
    except ValueError:
        raise ApiError(400, "body is not JSON")
    if not isinstance(req, dict):
        raise ApiError(400, "body must be a JSON object")
    return req


def memory_page(items, query, limit):
    """Keyset paging in path order: the cursor names the last path of the page before."""
    after = None
    cursor = q1(query, "page")
    if cursor:
        try:
            if not cursor.startswith("page_"):
                raise ValueError(cursor)
            after = json.loads(base64.urlsafe_b64decode(cursor[5:] + "==").decode())["after"]
        except (ValueError, KeyError, TypeError):
            raise ApiError(400, "page: invalid cursor")
        if not isinstance(after, str):
            raise ApiError(400, "page: invalid cursor")
        items = [m for m in items if m["path"] > after]
    nxt = None
    if len(items) > limit:
        nxt = "page_" + b64url(json.dumps({"after": items[limit - 1]["path"]}).encode())
    return items[:limit], nxt


# ---------------------------------------------------------------------------------------------
# HTTP


def parse_query(qs):
    q = {}
    for k, v in urllib.parse.parse_qsl(qs, keep_blank_values=True):
        q.setdefault(k, []).append(v)
    return q


def q1(q, key, default=None):
    v = q.get(key)
    return v[-1] if v else default


CONNECTIONS = itertools.count(1)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "srt-fake-control-plane/1"
    control_only = False
    verbose = False

    def log_message(self, fmt, *args):
        if self.verbose:
            sys.stderr.write("fake: " + (fmt % args) + "\n")

    def setup(self):
        # Which connection a request came on (recorded as "conn"): tests count them to see
        # that a client keeps its connections.
        self.conn_id = next(CONNECTIONS)
        if isinstance(self.request, ssl.SSLSocket):
            # The handshake runs here, on the connection's thread, not in the accept loop.
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                self.close_connection = True
            self.request.settimeout(None)
        super().setup()

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ssl.SSLError, ConnectionError, BrokenPipeError):
            self.close_connection = True

    # -- plumbing ------------------------------------------------------------------------------

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                if len(out) + size > MAX_BODY:
                    raise ApiError(413, "request body too large")
                out += self.rfile.read(size)
                self.rfile.readline(16)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ApiError(413, "request body too large")
        return self.rfile.read(n) if n > 0 else b""

    def send_bytes(self, status, body, ctype="application/json", headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        if status not in (204, 304):
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_fake_" + secrets.token_hex(6))
        self.end_headers()
        if status not in (204, 304) and self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status, obj, headers=None):
        self.send_bytes(status, json.dumps(obj).encode(), headers=headers)

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, parse_query(url.query)
        try:
            body = self.read_body()
        except ApiError as e:
            self.close_connection = True
            return self.send_json(e.status, e.body)
        except (ValueError, OSError):
            self.close_connection = True
            return self.send_json(400, api_error(400, "malformed request body"))
        if path.startswith("/_fake/"):
            try:
                return self.control(path, query, body)
            except ApiError as e:
                return self.send_json(e.status, e.body)
            except (ValueError, KeyError, TypeError) as e:
                return self.send_json(400, api_error(400, "control: %s: %s"
                                                     % (type(e).__name__, e)))
        if self.control_only:
            return self.send_json(404, api_error(404, "this listener serves only /_fake/"))
        self.api(path, url.query, query, body)

    # -- the public API ------------------------------------------------------------------------

    def api(self, path, raw_query, query, body):
        st = STATE
        endpoint, params = None, {}
        for name, method, rx in ROUTES:
            m = rx.fullmatch(path)
            if m and method == self.command:
                endpoint, params = name, m.groupdict()
                break
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = headers[k] + ", " + v if k in headers else v
        rec = {
            "time": time.time(),
            "method": self.command,
            "path": path,
            "raw_query": raw_query,
            "query": {k: (v[0] if len(v) == 1 else v) for k, v in query.items()},
            "headers": headers,
            "endpoint": endpoint,
            "session_id": params.get("session"),
            "work_id": params.get("work"),
            "status": None,
            "auth": None,
            "fault": None,
            "conn": self.conn_id,
        }
        try:
            rec["body"] = body.decode()
        except UnicodeDecodeError:
            rec["body"] = None
            rec["body_b64"] = base64.b64encode(body).decode()
        try:
            rec["json"] = json.loads(body) if body else None
        except ValueError:
            rec["json"] = None
        if rec["session_id"] is None and rec["work_id"] and rec["work_id"] in st.work:
            rec["session_id"] = st.work[rec["work_id"]]["session_id"]
        with st.lock:
            rec["seq"] = len(st.requests) + 1
            st.requests.append(rec)
            fault = None
            for f in st.faults:
                if f.matches(self.command, path, endpoint, params):
                    if f.skip > 0:
                        f.skip -= 1
                        continue
                    f.hits += 1
                    if f.count > 0:
                        f.count -= 1
                    fault = f
                    break
            st.lock.notify_all()
        if fault is not None and fault.kind != "stream_drop":
            rec["fault"] = fault.id
            if self.apply_fault(fault, rec):
                return
        try:
            status = self.route(st, endpoint, params, query, body, rec,
                                fault if fault is not None and fault.kind == "stream_drop"
                                else None)
        except ApiError as e:
            rec["status"] = e.status
            self.send_json(e.status, e.body)
            return
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            rec["status"] = 400
            self.send_json(400, api_error(400, "%s: %s" % (type(e).__name__, e)))
            return
        rec["status"] = status

    def apply_fault(self, fault, rec):
        """Answers the request as the fault says; False lets the real handler run (delay)."""
        spec = fault.spec
        if spec.get("delay_ms"):
            time.sleep(float(spec["delay_ms"]) / 1000.0)
        if fault.kind == "delay":
            return False
        if fault.kind == "drop":
            rec["status"] = 0
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        status = int(spec.get("status", 500))
        headers = dict(spec.get("headers") or {})
        if "retry_after" in spec:
            headers["Retry-After"] = str(spec["retry_after"])
        rec["status"] = status
        if "body" in spec:
            b = spec["body"]
            if isinstance(b, str):
                self.send_bytes(status, b.encode(), ctype=spec.get("content_type", "text/plain"),
                                headers=headers)
            else:
                self.send_json(status, b, headers=headers)
        elif status == 204 or 200 <= status < 300:
            self.send_bytes(status, b"", headers=headers)
        else:
            self.send_json(status, api_error(status, spec.get("message", "injected fault %s"
                                                                % fault.id)), headers=headers)
        return True

    def check_headers_and_auth(self, st, endpoint, params, rec):
        if self.headers.get("x-api-key") is not None:
            raise ApiError(400, "x-api-key and Authorization: Bearer were both given; "
                           "the server rejects the dual auth")
        if not self.headers.get("anthropic-version"):
            raise ApiError(400, "anthropic-version: header is required")
        if not self.headers.get("anthropic-beta"):
            raise ApiError(400, "anthropic-beta: header is required for this beta endpoint")
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            rec["auth"] = "none"
            raise ApiError(401, "missing bearer credential in the Authorization header")
        token = auth[7:].strip()
        if token == st.env_key:
            rec["auth"] = "env_key"
        elif token in st.tokens:
            rec["auth"] = "sessions_token"
            rec["token_work_id"] = st.tokens[token]
        else:
            rec["auth"] = "invalid"
            raise ApiError(401, "invalid bearer credential")
        if "env" in params and params["env"] != st.env_id:
            raise ApiError(404, "environment %r not found" % params["env"])
        work_id = params.get("work")
        if endpoint in ("poll", "stats", "work_list") and rec["auth"] != "env_key":
            raise ApiError(401, "this endpoint needs the environment key")
        if work_id is not None and rec["auth"] == "sessions_token" and \
                rec["token_work_id"] != work_id:
            raise ApiError(401, "the sessions token is not valid for work %r" % work_id)
        if endpoint in ("work_update",) and rec["auth"] != "env_key":
            raise ApiError(401, "this endpoint needs the environment key")
        sid = params.get("session")
        if sid is not None:
            if rec["auth"] == "env_key" and not st.config["session_accepts_env_key"]:
                raise ApiError(401, "the environment key is not accepted for session calls")
            if rec["auth"] == "sessions_token" and \
                    st.work[rec["token_work_id"]]["session_id"] != sid:
                raise ApiError(401, "the sessions token is not valid for session %r" % sid)
        if endpoint and endpoint.startswith("skill") and rec["auth"] == "sessions_token" and \
                not st.config["skills_accept_sessions_token"]:
            raise ApiError(401, "the skills API takes the environment key, not a sessions token")
        store = params.get("store")
        if store is not None:
            # Memory belongs to sessions: only the token of a session that names the store.
            if rec["auth"] == "env_key":
                raise ApiError(401, "memory stores do not accept the environment key; use the "
                               "work item's sessions token")
            own = st.work[rec["token_work_id"]]["session_id"]
            resources = st.sessions[own]["resources"] if own in st.sessions else []
            if not any(isinstance(r, dict) and r.get("type") == "memory_store" and
                       r.get("memory_store_id") == store for r in resources):
                raise ApiError(403, "session %r has no memory_store resource for %r"
                               % (own, store))

    def route(self, st, endpoint, params, query, body, rec, stream_fault):
        if endpoint is None:
            raise ApiError(404, "no route for %s %s" % (self.command, rec["path"]))
        with st.lock:
            self.check_headers_and_auth(st, endpoint, params, rec)
        if endpoint == "poll":
            return self.poll(st, query, rec)
        if endpoint == "stream":
            return self.stream(st, params["session"], query, stream_fault)
        with st.lock:
            status, obj, extra = getattr(self, "ep_" + endpoint)(st, params, query, body, rec)
        if isinstance(obj, bytes):
            self.send_bytes(status, obj, ctype=extra)
        elif status == 204:
            self.send_bytes(204, b"")
        else:
            self.send_json(status, obj)
        return status

    def poll(self, st, query, rec):
        block = q1(query, "block_ms")
        reclaim = q1(query, "reclaim_older_than_ms")
        try:
            block_ms = None if block is None else int(block)
            reclaim_ms = DEFAULT_RECLAIM_MS if reclaim is None else int(reclaim)
        except ValueError:
            raise ApiError(400, "block_ms and reclaim_older_than_ms must be integers")
        if block_ms is not None and block_ms < 1:
            raise ApiError(400, "block_ms must be between 1 and %d" % MAX_BLOCK_MS)
        if reclaim_ms < 0:
            raise ApiError(400, "reclaim_older_than_ms must not be negative")
        block_s = min(block_ms or 0, MAX_BLOCK_MS) / 1000.0
        deadline = time.monotonic() + block_s
        with st.lock:
            worker = self.headers.get("Anthropic-Worker-ID")
            if worker:
                st.workers[worker] = time.time()
            while True:
                now = time.time()
                found = None
                for wid in st.queue:
                    if claimable(st.work[wid], reclaim_ms, now):
                        found = st.work[wid]
                        break
                if found is not None:
                    found["delivered_at"] = now
                    found["deliveries"].append({"time": now, "worker_id": worker})
                    obj = work_view(st, found, with_secret=True)
                    rec["work_id"] = found["id"]
                    rec["session_id"] = found["session_id"]
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    obj = None
                    break
                st.lock.wait(left)
        if obj is not None:
            self.send_json(200, obj)
            return 200
        mode = st.config["empty_poll"]
        if mode == "null":
            self.send_bytes(200, b"null")
            return 200
        if mode == "empty":
            self.send_bytes(200, b"")
            return 200
        self.send_bytes(204, b"")
        return 204

    def work_or_404(self, st, params):
        rec = st.work.get(params["work"])
        if rec is None:
            raise ApiError(404, "work %r not found" % params["work"])
        return rec

    def ep_stats(self, st, params, query, body, rec):
        now = time.time()
        depth = [w for w in st.work.values() if w["state"] == "queued" and not w["delivered_at"]]
        pending = [w for w in st.work.values()
                   if w["state"] == "queued" and w["delivered_at"] and not w["acknowledged_at"]]
        oldest = min((w["created_at"] for w in depth), default=None)
        polling = sum(1 for t in st.workers.values() if now - t < 30)
        return 200, {"type": "work_queue_stats", "depth": len(depth), "pending": len(pending),
                     "oldest_queued_at": oldest, "workers_polling": polling}, None

    def ep_ack(self, st, params, query, body, rec):
        w = self.work_or_404(st, params)
        if w["state"] == "stopped":
            raise ApiError(409, "work %r is already stopped" % w["id"])
        w["acks"] += 1
        if not w["acknowledged_at"]:
            w["acknowledged_at"] = now_rfc3339()
        if w["state"] == "queued":
            w["state"] = "starting"
        st.lock.notify_all()
        return 200, work_view(st, w), None

    def ep_heartbeat(self, st, params, query, body, rec):
        w = self.work_or_404(st, params)
        expected = q1(query, "expected_last_heartbeat")
        if expected is None:
            raise ApiError(400, "expected_last_heartbeat is required (NO_HEARTBEAT on the first "
                           "beat)")
        current = w["last_heartbeat"] if w["last_heartbeat"] is not None else NO_HEARTBEAT
        entry = {"time": time.time(), "expected": expected, "ok": expected == current}
        w["heartbeats"].append(entry)
        if expected != current:
            entry["status"] = 412
            raise ApiError(412, "expected_last_heartbeat %r does not match %r: the lease was "
                           "reclaimed" % (expected, current))
        ttl = st.config["ttl_seconds"]
        desired = q1(query, "desired_ttl_seconds")
        if desired is not None:
            try:
                ttl = max(1, min(int(desired), 3600))
            except ValueError:
                raise ApiError(400, "desired_ttl_seconds must be an integer")
        expire_lease(st, w)
        extended = w["state"] != "stopped"
        if extended:
            stamp = now_rfc3339()
            while stamp == w["last_heartbeat"]:
                stamp = now_rfc3339()
            w["last_heartbeat"] = stamp
            w["latest_heartbeat_at"] = stamp
            if w["state"] in ("queued", "starting"):
                w["state"] = "active"
                w["started_at"] = w["started_at"] or stamp
        entry["status"] = 200
        entry["state"] = w["state"]
        st.lock.notify_all()
        return 200, {"type": "work_heartbeat", "last_heartbeat": w["last_heartbeat"],
                     "lease_extended": extended, "state": w["state"], "ttl_seconds": ttl}, None

    def ep_stop(self, st, params, query, body, rec):
        w = self.work_or_404(st, params)
        try:
            req = json.loads(body) if body.strip() else {}
        except ValueError:
            raise ApiError(400, "stop: body is not JSON")
        if not isinstance(req, dict) or not isinstance(req.get("force", False), bool):
            raise ApiError(400, "stop: body must be {\"force\": bool}")
        force = req.get("force", False)
        expire_lease(st, w)
        w["stops"].append({"time": time.time(), "force": force, "by": "api",
                           "state_before": w["state"]})
        if w["state"] == "stopped":
            raise ApiError(409, "work %r is already stopped" % w["id"])
        do_stop(w, force or w["state"] in ("stopping", "queued"))
        st.lock.notify_all()
        return 204, None, None

    def ep_work_get(self, st, params, query, body, rec):
        return 200, work_view(st, self.work_or_404(st, params)), None

    def ep_work_update(self, st, params, query, body, rec):
        w = self.work_or_404(st, params)
        req = json.loads(body or b"{}")
        md = req.get("metadata")
        if not isinstance(md, dict):
            raise ApiError(400, "metadata must be an object")
        for k, v in md.items():
            if v is None:
                w["metadata"].pop(k, None)
            else:
                w["metadata"][k] = str(v)
        return 200, work_view(st, w), None

    def ep_work_list(self, st, params, query, body, rec):
        items = [work_view(st, st.work[w]) for w in st.queue]
        return 200, page(items, query), None

    def session_or_404(self, st, params):
        s = st.sessions.get(params["session"])
        if s is None:
            raise ApiError(404, "session %r not found" % params["session"])
        return s

    def ep_session_get(self, st, params, query, body, rec):
        return 200, session_view(st, self.session_or_404(st, params)), None

    def ep_events_list(self, st, params, query, body, rec):
        s = self.session_or_404(st, params)
        evs = list(s["events"])
        types = query.get("types[]", []) + query.get("types", [])
        if types:
            evs = [e for e in evs if e["type"] in types]
        for op in ("gt", "gte", "lt", "lte"):
            v = q1(query, "created_at[%s]" % op)
            if v is None:
                continue
            try:
                t = datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
            except ValueError:
                raise ApiError(400, "created_at[%s]: not an RFC 3339 time" % op)
            cmp = {"gt": lambda a: a > t, "gte": lambda a: a >= t,
                   "lt": lambda a: a < t, "lte": lambda a: a <= t}[op]
            evs = [e for e in evs if cmp(parse_rfc3339(e["processed_at"]))]
        order = q1(query, "order", "asc")
        if order not in ("asc", "desc"):
            raise ApiError(400, "order must be asc or desc")
        if order == "desc":
            evs.reverse()
        return 200, page(evs, query), None

    def ep_events_post(self, st, params, query, body, rec):
        s = self.session_or_404(st, params)
        try:
            req = json.loads(body)
        except ValueError:
            raise ApiError(400, "body is not JSON")
        events = req.get("events") if isinstance(req, dict) else None
        if not isinstance(events, list) or not events:
            raise ApiError(400, "events: a non-empty list is required")
        tool_uses = {e["id"]: e for e in s["events"] if e["type"].endswith("tool_use")}
        answered = {(r["event"].get("tool_use_id") or r["event"].get("custom_tool_use_id"))
                    for r in s["results"]
                    if r["event"]["type"] in ("user.tool_result", "user.custom_tool_result")}
        checks = []
        for ev in events:
            if not isinstance(ev, dict):
                raise ApiError(400, "events: each event must be an object")
            key, want = validate_user_event(s, ev)
            if key is not None:
                target = tool_uses.get(ev[key])
                if st.config["strict_results"] and (target is None or target["type"] != want):
                    raise ApiError(400, "%s: %s %r is not an %s event of this session"
                                   % (ev["type"], key, ev[key], want))
                checks.append(ev[key] in answered)
                answered.add(ev[key])
            else:
                checks.append(False)
        stored = append_events(st, s, events)
        for ev, dup in zip(stored, checks):
            s["results"].append({"time": time.time(), "event": ev, "duplicate": dup,
                                 "auth": rec["auth"], "request_seq": rec["seq"]})
        return 200, {"data": stored}, None

    def ep_skill_versions(self, st, params, query, body, rec):
        versions = st.skills.get(params["skill"])
        if versions is None:
            raise ApiError(404, "skill %r not found" % params["skill"])
        items = [skill_version_view(v) for v in
                 sorted(versions.values(), key=lambda v: (len(v["version"]), v["version"]),
                        reverse=True)]
        return 200, page(items, query), None

    def skill_or_404(self, st, params):
        v = st.skills.get(params["skill"], {}).get(params["version"])
        if v is None:
            raise ApiError(404, "skill %r version %r not found"
                           % (params["skill"], params["version"]))
        return v

    def ep_skill_version(self, st, params, query, body, rec):
        return 200, skill_version_view(self.skill_or_404(st, params)), None

    def ep_skill_content(self, st, params, query, body, rec):
        v = self.skill_or_404(st, params)
        return 200, v["archive"], v["content_type"]

    def store_or_404(self, st, params):
        store = st.memory_stores.get(params["store"])
        if store is None:
            raise ApiError(404, "memory store %r not found" % params["store"])
        return store

    def memory_or_404(self, st, params):
        store = self.store_or_404(st, params)
        m = store["memories"].get(params["memory"])
        if m is None:
            raise ApiError(404, "memory %r not found in memory store %r"
                           % (params["memory"], store["id"]))
        return store, m

    def ep_memory_list(self, st, params, query, body, rec):
        store = self.store_or_404(st, params)
        view = memory_view_param(query, "basic")
        try:
            limit = int(q1(query, "limit", MEMORY_PAGE))
        except ValueError:
            raise ApiError(400, "limit must be an integer")
        if limit < 1 or limit > MAX_MEMORY_PAGE:
            raise ApiError(400, "limit must be between 1 and %d" % MAX_MEMORY_PAGE)
        if view == "full":
            limit = min(limit, MAX_MEMORY_PAGE_FULL)
        prefix = q1(query, "path_prefix")
        if prefix is not None and not prefix.endswith("/"):
            raise ApiError(400, "path_prefix %r must end with '/'" % prefix)
        items = [m for m in memories_in_order(store)
                 if prefix is None or m["path"].startswith(prefix)]
        chunk, nxt = memory_page(items, query, limit)
        return 200, {"data": [memory_view(store, m, view) for m in chunk], "next_page": nxt}, None

    def ep_memory_get(self, st, params, query, body, rec):
        store, m = self.memory_or_404(st, params)
        return 200, memory_view(store, m, memory_view_param(query, "full")), None

    def ep_memory_create(self, st, params, query, body, rec):
        store = self.store_or_404(st, params)
        view = memory_view_param(query, "basic")
        req = memory_request(body)
        check_memory_path(req.get("path"))
        if "content" not in req:
            raise ApiError(400, "content: required (\"\" for an empty memory)")
        check_memory_content(req["content"])
        if memory_at(store, req["path"]) is not None:
            raise ApiError(409, "a memory already exists at path %r" % req["path"])
        if len(store["memories"]) >= MAX_MEMORIES:
            raise ApiError(409, "memory store %r is full: it holds at most %d memories"
                           % (store["id"], MAX_MEMORIES))
        m = new_memory(st, store, req["path"], req["content"])
        return 200, memory_view(store, m, view), None

    def ep_memory_update(self, st, params, query, body, rec):
        store, m = self.memory_or_404(st, params)
        view = memory_view_param(query, "basic")
        req = memory_request(body)
        if "content" not in req and "path" not in req:
            raise ApiError(400, "an update needs content, path or both")
        if "content" in req:
            check_memory_content(req["content"])
        if "path" in req:
            check_memory_path(req["path"])
        content = req.get("content", m["content"])
        path = req.get("path", m["path"])
        pre = req.get("precondition")
        if pre is not None:
            if not isinstance(pre, dict) or pre.get("type") != "content_sha256" or \
                    not isinstance(pre.get("content_sha256"), str):
                raise ApiError(400, "precondition must be {\"type\": \"content_sha256\", "
                               "\"content_sha256\": HEX}")
            if pre["content_sha256"] != m["content_sha256"]:
                if m["content"] == content and m["path"] == path:
                    # Already as asked (a retry whose first try landed): nothing to do.
                    return 200, memory_view(store, m, view), None
                raise ApiError(409, "precondition failed: memory %r has content_sha256 %s, not %s"
                               % (m["id"], m["content_sha256"], pre["content_sha256"]),
                               "memory_precondition_failed_error")
        if path != m["path"] and memory_at(store, path) is not None:
            raise ApiError(409, "a memory already exists at path %r" % path)
        if content != m["content"] or path != m["path"]:
            set_memory(st, m, path, content)
        return 200, memory_view(store, m, view), None

    def ep_memory_delete(self, st, params, query, body, rec):
        store, m = self.memory_or_404(st, params)
        expected = q1(query, "expected_content_sha256")
        if expected is not None and expected != m["content_sha256"]:
            raise ApiError(409, "precondition failed: memory %r has content_sha256 %s, not %s"
                           % (m["id"], m["content_sha256"], expected),
                           "memory_precondition_failed_error")
        del store["memories"][m["id"]]
        return 200, {"id": m["id"], "type": "memory_deleted"}, None

    # -- SSE -----------------------------------------------------------------------------------

    def stream(self, st, session_id, query, fault):
        with st.lock:
            s = st.sessions.get(session_id)
            if s is None:
                raise ApiError(404, "session %r not found" % session_id)
            drop_after = None
            abrupt = False
            if fault is not None:
                drop_after = int(fault.spec.get("after_events", 0))
                abrupt = bool(fault.spec.get("abrupt", False))
            sid = st.next_id("stream")
            stream = Stream(sid, session_id, drop_after)
            stream.abrupt = abrupt
            if st.config["stream_replay"] or q1(query, "_replay") == "1":
                stream.events.extend(s["events"])
            st.streams[sid] = stream
            st.lock.notify_all()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("request-id", "req_fake_" + secrets.token_hex(6))
            self.end_headers()
            self.wfile.flush()
            self.pump(st, stream)
        except (OSError, ssl.SSLError):
            pass
        finally:
            with st.lock:
                stream.closed = True
                st.streams.pop(stream.id, None)
                st.lock.notify_all()
            self.close_connection = True
        return 200

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def pump(self, st, stream):
        last_ping = time.monotonic()
        while True:
            with st.lock:
                while True:
                    if stream.closed:
                        return self.end_stream(stream)
                    if stream.drop_after is not None and stream.sent >= stream.drop_after:
                        return self.end_stream(stream)
                    if stream.events:
                        frame = stream.events.pop(0)
                        break
                    interval = st.config["ping_interval"]
                    if interval and time.monotonic() - last_ping >= interval:
                        frame = "ping"
                        break
                    wait = 0.5 if not interval else max(
                        0.01, min(0.5, interval - (time.monotonic() - last_ping)))
                    st.lock.wait(wait)
            if frame == "ping":
                last_ping = time.monotonic()
                self.chunk("event: ping\ndata: {\"type\":\"ping\"}\n\n")
                continue
            if isinstance(frame, tuple):  # ("error", payload)
                self.chunk("event: error\ndata: %s\n\n" % json.dumps(frame[1]))
                continue
            self.chunk("event: %s\nid: %s\ndata: %s\n\n"
                       % (frame["type"], frame["id"], json.dumps(frame)))
            stream.sent += 1

    def end_stream(self, stream):
        if stream.abrupt:
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # -- the control API -----------------------------------------------------------------------

    def control(self, path, query, body):
        st = STATE
        req = json.loads(body) if body.strip() else {}
        parts = [p for p in path.split("/") if p][1:]  # drop "_fake"
        m = self.command
        with st.lock:
            if parts == ["health"]:
                return self.send_json(200, {"ok": True, "env_id": st.env_id, "pid": os.getpid()})
            if parts == ["reset"] and m == "POST":
                for s in st.streams.values():
                    s.closed = True
                st.reset()
                st.lock.notify_all()
                return self.send_json(200, {"ok": True})
            if parts == ["config"]:
                if m == "POST":
                    for k, v in req.items():
                        if k not in st.config:
                            raise ApiError(400, "unknown config key %r" % k)
                        st.config[k] = v
                    st.lock.notify_all()
                return self.send_json(200, st.config)
            if parts == ["work"] and m == "POST":
                rec = new_work(st, req)
                return self.send_json(200, fake_work_view(st, rec))
            if parts == ["work"] and m == "GET":
                return self.send_json(200, {"data": [fake_work_view(st, st.work[w])
                                                     for w in st.queue]})
            if len(parts) == 2 and parts[0] == "work" and m == "GET":
                w = st.work.get(parts[1])
                if w is None:
                    raise ApiError(404, "no work %r" % parts[1])
                return self.send_json(200, fake_work_view(st, w))
            if len(parts) == 3 and parts[0] == "work" and parts[2] == "steal" and m == "POST":
                # Another worker took the lease: the next heartbeat of ours gets 412.
                w = st.work.get(parts[1])
                if w is None:
                    raise ApiError(404, "no work %r" % parts[1])
                w["last_heartbeat"] = now_rfc3339() + "-stolen"
                return self.send_json(200, fake_work_view(st, w))
            if parts == ["stop_work"] and m == "POST":
                w = st.work.get(req["work_id"])
                if w is None:
                    raise ApiError(404, "no work %r" % req["work_id"])
                force = bool(req.get("force", False))
                w["stops"].append({"time": time.time(), "force": force, "by": "operator",
                                   "state_before": w["state"]})
                if w["state"] == "stopped":
                    raise ApiError(409, "work %r is already stopped" % w["id"])
                do_stop(w, force or w["state"] == "queued")
                st.lock.notify_all()
                return self.send_json(200, fake_work_view(st, w))
            if parts == ["sessions"] and m == "POST":
                sid = req.get("id") or st.next_id("sesn")
                s = ensure_session(st, sid, req)
                return self.send_json(200, session_view(st, s))
            if len(parts) >= 2 and parts[0] == "sessions":
                s = st.sessions.get(parts[1])
                if s is None and not (len(parts) == 3 and parts[2] == "events" and m == "POST"):
                    raise ApiError(404, "no session %r" % parts[1])
                if len(parts) == 2 and m == "GET":
                    v = session_view(st, s)
                    v["streams"] = sum(1 for x in st.streams.values()
                                       if x.session_id == s["id"] and not x.closed)
                    v["events"] = s["events"]
                    v["results"] = s["results"]
                    return self.send_json(200, v)
                if len(parts) == 3 and parts[2] == "events":
                    if m == "GET":
                        return self.send_json(200, {"data": s["events"]})
                    s = s or ensure_session(st, parts[1])
                    evs = req.get("events", req) if isinstance(req, dict) else req
                    if isinstance(evs, dict):
                        evs = [evs]
                    return self.send_json(200, {"data": append_events(st, s, evs)})
                if len(parts) == 3 and parts[2] == "results" and m == "GET":
                    # ?wait_count=N&timeout_ms=T: wait (up to T, at most 30 s) until the session
                    # has N results; a benchmark's agent loop reacts at once without polling.
                    want = int(q1(query, "wait_count", 0))
                    limit = min(int(q1(query, "timeout_ms", 0)), 30000) / 1000.0
                    deadline = time.monotonic() + limit
                    while len(s["results"]) < want and deadline > time.monotonic():
                        st.lock.wait(deadline - time.monotonic())
                    return self.send_json(200, {"data": s["results"]})
                if len(parts) == 3 and parts[2] == "drop_streams" and m == "POST":
                    n = 0
                    for x in st.streams.values():
                        if x.session_id == s["id"] and not x.closed:
                            x.closed = True
                            x.abrupt = bool(req.get("abrupt", False))
                            n += 1
                    st.lock.notify_all()
                    return self.send_json(200, {"dropped": n})
                if len(parts) == 3 and parts[2] == "stream_error" and m == "POST":
                    payload = req.get("error") or api_error(529, "Overloaded")
                    n = 0
                    for x in st.streams.values():
                        if x.session_id == s["id"] and not x.closed:
                            x.events.append(("error", payload))
                            n += 1
                    st.lock.notify_all()
                    return self.send_json(200, {"streams": n})
            if parts == ["requests"] and m == "GET":
                return self.send_json(200, {"data": filter_requests(st.requests, query)})
            if parts == ["requests"] and m == "DELETE":
                st.requests.clear()
                return self.send_json(200, {"ok": True})
            if parts == ["faults"]:
                if m == "POST":
                    specs = req if isinstance(req, list) else [req]
                    out = []
                    for spec in specs:
                        f = Fault(st.next_id("fault"), spec)
                        if f.kind == "stream_drop" and not f.endpoint and not f.path:
                            f.endpoint = "stream"
                        st.faults.append(f)
                        out.append(f.view())
                    return self.send_json(200, {"data": out})
                if m == "DELETE":
                    st.faults.clear()
                    return self.send_json(200, {"ok": True})
                return self.send_json(200, {"data": [f.view() for f in st.faults]})
            if parts == ["skills"] and m == "POST":
                skill_id = req.get("skill_id") or st.next_id("skill")
                version = str(req.get("version") or int(time.time() * 1000000))
                data, ctype = build_archive(req)
                if "content_type" in req:
                    ctype = req["content_type"]
                v = {"type": "skill_version", "id": "skillver_" + secrets.token_hex(6),
                     "skill_id": skill_id, "version": version,
                     "name": req.get("name", skill_id),
                     "description": req.get("description", "a fake skill"),
                     "directory": req.get("directory", req.get("name", skill_id)),
                     "created_at": now_rfc3339(), "archive": data, "content_type": ctype}
                st.skills.setdefault(skill_id, {})[version] = v
                out = skill_version_view(v)
                out["size"] = len(data)
                out["content_type"] = ctype
                return self.send_json(200, out)
            if parts == ["memory_stores"] and m == "POST":
                # Creates or replaces the store. "validate": false seeds paths and contents the
                # real server would refuse (for tests of a client that must not trust it).
                store_id = req.get("id") or st.next_id("memstore")
                memories = req.get("memories") or {}
                if not isinstance(memories, dict):
                    raise ApiError(400, "memories must be an object {path: content}")
                validate = req.get("validate", True)
                if validate and len(memories) > MAX_MEMORIES:
                    raise ApiError(400, "a store holds at most %d memories" % MAX_MEMORIES)
                store = {"id": store_id, "memories": {}}
                for path, content in sorted(memories.items()):
                    if validate:
                        check_memory_path(path)
                        check_memory_content(content)
                    elif not isinstance(content, str):
                        raise ApiError(400, "memories[%r]: content must be a string" % path)
                    new_memory(st, store, path, content)
                st.memory_stores[store_id] = store
                return self.send_json(200, memory_store_view(store))
            if len(parts) == 2 and parts[0] == "memory_stores" and m == "GET":
                store = st.memory_stores.get(parts[1])
                if store is None:
                    raise ApiError(404, "no memory store %r" % parts[1])
                return self.send_json(200, memory_store_view(store))
            if parts == ["stats"] and m == "GET":
                return self.send_json(200, {
                    "work": len(st.work), "sessions": len(st.sessions),
                    "streams": len(st.streams), "requests": len(st.requests),
                    "workers": st.workers})
        raise ApiError(404, "no control route %s %s" % (m, path))


def do_stop(w, force):
    stamp = now_rfc3339()
    w["stop_requested_at"] = w["stop_requested_at"] or stamp
    if force:
        w["state"] = "stopped"
        w["stopped_at"] = stamp
    else:
        w["state"] = "stopping"


def page(items, query):
    try:
        limit = int(q1(query, "limit", MAX_PAGE))
    except ValueError:
        raise ApiError(400, "limit must be an integer")
    if limit < 1 or limit > MAX_PAGE:
        raise ApiError(400, "limit must be between 1 and %d" % MAX_PAGE)
    start = 0
    cursor = q1(query, "page")
    if cursor:
        try:
            start = int(json.loads(base64.urlsafe_b64decode(cursor + "==").decode())["o"])
        except (ValueError, KeyError, TypeError):
            raise ApiError(400, "page: invalid cursor")
    chunk = items[start:start + limit]
    nxt = None
    if start + limit < len(items):
        nxt = b64url(json.dumps({"o": start + limit}).encode())
    return {"data": chunk, "next_page": nxt}


def filter_requests(reqs, query):
    out = []
    since = int(q1(query, "since", 0))
    rx = re.compile(q1(query, "path_re")) if q1(query, "path_re") else None
    for r in reqs:
        if r["seq"] <= since:
            continue
        if q1(query, "endpoint") and r["endpoint"] != q1(query, "endpoint"):
            continue
        if q1(query, "method") and r["method"] != q1(query, "method").upper():
            continue
        if q1(query, "session") and r["session_id"] != q1(query, "session"):
            continue
        if q1(query, "work") and r["work_id"] != q1(query, "work"):
            continue
        if rx and not rx.search(r["path"]):
            continue
        out.append(r)
    return out


# ---------------------------------------------------------------------------------------------
# Main


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, addr, handler, tls_ctx=None):
        self.tls_ctx = tls_ctx
        super().__init__(addr, handler)

    def get_request(self):
        conn, addr = super().get_request()
        # A response's head and body are two writes. Without TCP_NODELAY the body waits for
        # the ACK of the head, which a client on a kept connection (out of TCP's quick-ACK
        # start) delays by 40 ms; production servers set it too.
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls_ctx is not None:
            conn = self.tls_ctx.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, addr

    def handle_error(self, request, client_address):
        if Handler.verbose:
            super().handle_error(request, client_address)


def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--ready-fd", type=int, default=None)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--env-id", default="env_fake")
    ap.add_argument("--env-key", default="sk-ant-oat01-fake-environment-key")
    ap.add_argument("--ttl-seconds", type=int, default=30)
    ap.add_argument("--ping-interval", type=float, default=5.0,
                    help="seconds between SSE ping events; 0 disables them")
    ap.add_argument("--stdin-watch", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")

    STATE = State(args)
    Handler.verbose = args.verbose
    tls_ctx = None
    if args.tls_cert:
        tls_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_ctx.load_cert_chain(args.tls_cert, args.tls_key)
    main_srv = Server((args.host, args.port), Handler, tls_ctx)
    servers = [main_srv]
    control_port = main_srv.server_address[1]
    if tls_ctx is not None:
        control_handler = type("ControlHandler", (Handler,), {"control_only": True})
        ctl = Server((args.host, 0), control_handler)
        servers.append(ctl)
        control_port = ctl.server_address[1]

    done = threading.Event()
    for srv in servers:
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1},
                         daemon=True).start()

    def on_signal(signum, frame):
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    watch = args.stdin_watch == "on"
    if args.stdin_watch == "auto":
        try:
            mode = os.fstat(0).st_mode
            watch = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        except OSError:
            watch = False
    if watch:
        def watch_stdin():
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            done.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    line = "READY %d %d\n" % (main_srv.server_address[1], control_port)
    sys.stdout.write(line)
    sys.stdout.flush()
    if args.ready_fd is not None:
        os.write(args.ready_fd, line.encode())
        os.close(args.ready_fd)

    while not done.wait(0.5):
        pass
    with STATE.lock:
        for s in STATE.streams.values():
            s.closed = True
        STATE.lock.notify_all()
    for srv in servers:
        srv.shutdown()
        srv.server_close()
    sys.stdout.flush()
    os._exit(0)  # daemon threads may still hold idle keep-alive connections


if __name__ == "__main__":
    main()
