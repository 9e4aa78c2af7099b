#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""examples/k8s/srt-poller-daemonset.yaml against the srt-poller it runs and docs/fleet.md.

  daemonset_test.py --srt-poller PATH --src SOURCE_DIR

Checks that the manifest names only flags srt-poller accepts, asks for no privilege beyond
what docs/fleet.md lists and explains (each security setting the manifest uses is named there),
and, as root, that srt-poller with the manifest's arguments starts a session sandbox under the
manifest's capabilities (only CAP_SETFCAP in the bounding set): the --check probe. The API check
fails here (no network), so only the probe's line decides. Exit 77: skipped.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("daemonset_test: python3-yaml is not installed", file=sys.stderr)
    sys.exit(1 if os.environ.get("SRT_MUST_WORK") == "1" else 77)

failures = []


def fail(message):
    failures.append(message)
    print("daemonset_test: " + message, file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--srt-poller", required=True)
    parser.add_argument("--src", required=True)
    opts = parser.parse_args()
    with open(os.path.join(opts.src, "examples/k8s/srt-poller-daemonset.yaml")) as f:
        manifest = yaml.safe_load(f)
    with open(os.path.join(opts.src, "docs/fleet.md")) as f:
        doc = f.read()

    pod = manifest["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = container["args"]
    security = container["securityContext"]

    # Every flag is one srt-poller knows.
    help_text = subprocess.run([opts.srt_poller, "--help"], capture_output=True, text=True,
                               check=True).stdout
    known = set(re.findall(r"(--[a-z][a-z-]*)", help_text))
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag not in known:
            fail(f"the manifest passes {flag}, which srt-poller --help does not list")

    # No privilege beyond the documented ones.
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            fail(f"the pod sets {key}")
    if pod.get("hostUsers") is not False:
        fail("the pod must run in a user namespace of its own (hostUsers: false)")
    if security.get("privileged") is not False:
        fail("the container must not be privileged")
    if security.get("allowPrivilegeEscalation") is not False:
        fail("allowPrivilegeEscalation must be false")
    caps = security.get("capabilities", {})
    if caps.get("drop") != ["ALL"] or caps.get("add") != ["SETFCAP"]:
        fail(f"capabilities must drop ALL and add only SETFCAP, not {caps}")
    # Each setting the manifest relies on has its reason in docs/fleet.md.
    named = ["hostUsers", "procMount", "seccompProfile", "appArmorProfile", "SETFCAP",
             "runAsUser", "readOnlyRootFilesystem", "subPath", "--no-limits", "--disk=0",
             "terminationGracePeriodSeconds"]
    named += [k for k in security if k not in ("privileged", "runAsNonRoot")]
    for word in sorted(set(named)):
        if f"`{word}" not in doc:
            fail(f"docs/fleet.md does not explain {word}")

    if os.geteuid() != 0:
        print("daemonset_test: not root: the probe under the manifest's capabilities is skipped")
    else:
        probe(opts.srt_poller, args)
    if failures:
        return 1
    print("daemonset_test: manifest, docs and the probe agree")
    return 0


def probe(srt_poller, args):
    with tempfile.TemporaryDirectory(prefix="srt-fleet-test-") as scratch:
        key = os.path.join(scratch, "environment-key")
        with open(key, "w") as f:
            f.write("sk-ant-oat01-not-a-real-key\n")
        os.chmod(key, 0o400)
        argv = []
        for arg in args:
            flag = arg.split("=", 1)[0]
            if flag == "--environment-key-file":
                arg = f"{flag}={key}"
            elif flag == "--sessions-dir":
                arg = f"{flag}={scratch}/sessions"
            argv.append(arg)
        argv += ["--check", "--environment-id=env_fleet_test", "--base-url=http://127.0.0.1:9"]
        run = subprocess.run(
            ["setpriv", "--bounding-set=-all,+setfcap", "--inh-caps=-all", "--", srt_poller] + argv,
            capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
        out = run.stdout + run.stderr
        if not re.search(r"^ok +a session sandbox starts here", out, re.M):
            fail("srt-poller with the manifest's arguments and only CAP_SETFCAP cannot start a "
                 "session sandbox:\n" + out)


if __name__ == "__main__":
    sys.exit(main())
