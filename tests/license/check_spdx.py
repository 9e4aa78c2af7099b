#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of srt says its licence (LICENSE: Apache-2.0) in an SPDX line near its top.

  check_spdx.py [--root DIR]   exit 1 and name each file without one

The files are those git tracks (a clean clone, as CI has); without git, the tree is walked.
Corpora, golden data and documents are not source and are not checked.
"""
import argparse
import os
import re
import subprocess
import sys

TAG = "SPDX-License-Identifier: Apache-2.0"
SOURCE = re.compile(r"(\.(cc|h|c|S|py|sh|cmake|h\.in|cmake\.in|pc\.in|service\.in|lintian-overrides)"
                    r"|(^|/)CMakeLists\.txt|^\.ci/run|^packaging/man/[^/]+\.[1-8]|^packaging/completion/[^/]+)$")
SKIP = re.compile(r"^(build/|tests/fuzz/corpus/|.*node_modules/)")
HEAD_LINES = 3  # the tag is on line 1, or line 2 after a #! or #compdef line


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        return [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build", "node_modules")]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files]
        return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = parser.parse_args()
    missing, checked = [], 0
    for rel in sorted(tracked(args.root)):
        if not SOURCE.search(rel) or SKIP.search(rel):
            continue
        path = os.path.join(args.root, rel)
        if not os.path.isfile(path):
            continue  # deleted in the work tree, not yet in git
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(HEAD_LINES)]
        if not any(TAG in line for line in head):
            missing.append(rel)
    for rel in missing:
        print(f"{rel}: no '{TAG}' line in its first {HEAD_LINES} lines")
    print(f"license: {checked - len(missing)} of {checked} source files say their licence")
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
