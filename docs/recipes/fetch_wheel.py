#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Installs a pure-Python wheel from PyPI without pip: the standard library only.

  python3 fetch_wheel.py NAME [DEST]     (DEST defaults to ./vendor; then PYTHONPATH=DEST)

It asks PyPI's JSON API (https://pypi.org/pypi/NAME/json) for the newest release, downloads its
py3-none-any wheel from files.pythonhosted.org, checks the sha256 PyPI published for it, and
unpacks it into DEST. urllib honours HTTPS_PROXY, so under srt both requests go through srt's
proxy. Dependencies are not followed (name them too), and nothing is compiled or run.
"""
import hashlib
import io
import json
import sys
import urllib.request
import zipfile


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    name, dest = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "vendor"
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=30) as r:
        meta = json.load(r)
    wheels = [u for u in meta["urls"]
              if u["packagetype"] == "bdist_wheel" and u["filename"].endswith("-py3-none-any.whl")]
    if not wheels:
        sys.exit(f"{name} {meta['info']['version']}: no pure-Python (py3-none-any) wheel")
    wheel = wheels[0]
    with urllib.request.urlopen(wheel["url"], timeout=60) as r:
        data = r.read()
    if hashlib.sha256(data).hexdigest() != wheel["digests"]["sha256"]:
        sys.exit(f"{wheel['filename']}: sha256 does not match PyPI's")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for member in z.namelist():
            if member.startswith("/") or ".." in member.split("/"):
                sys.exit(f"{wheel['filename']}: refusing the path {member!r}")
        z.extractall(dest)
    print(f"{name} {meta['info']['version']} -> {dest}/")


if __name__ == "__main__":
    main()
