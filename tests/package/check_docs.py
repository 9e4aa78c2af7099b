#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The man pages and the Debian changelog against what they describe, so neither can drift:

  check_docs.py --src DIR --bin DIR --version V
  check_docs.py --options PROGRAM     print the options PROGRAM --help lists, one a line

  - every option `srt --help`, `srt-attach --help`, `srt-poller --help` and `srt-mcp --help`
    list is in its page;
  - every settings key of libsrt/src/config/settings_keys.h is in srt-settings.5;
  - each page renders without a warning (groff -ww, and man --warnings where man-db is);
  - packaging/deb/changelog's first entry is for version V, the project's (V-REVISION).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

PAGES = {"srt": "srt.1", "srt-attach": "srt-attach.1", "srt-poller": "srt-poller.8",
         "srt-mcp": "srt-mcp.8"}
# Fewer options than this in a --help means its layout changed and the parser missed them.
MIN_OPTIONS = {"srt": 10, "srt-attach": 4, "srt-poller": 10, "srt-mcp": 4}


def help_options(program):
    """The options a --help text lists: on each line that starts (indented) with a dash, the
    dash words before the description (which starts after a gap of two spaces)."""
    text = subprocess.run([program, "--help"], check=True, capture_output=True, text=True).stdout
    options = set()
    for line in text.splitlines():
        if not re.match(r"^ {1,6}-", line):
            continue
        spec = re.split(r"(?<=\S) {2,}", line.strip(), maxsplit=1)[0]
        options.update(w.rstrip(",") for w in spec.split() if w.startswith("-"))
    return options


def roff(option):
    """How a page spells an option: every hyphen as \\- (a minus sign, not a hyphen)."""
    return option.replace("-", "\\-")


def item_tags(page):
    """The tags of a page's tagged paragraphs: the line after each .TP (and .TQ), where an
    option's own description starts (a mention in passing elsewhere does not count)."""
    lines = open(page, encoding="utf-8").read().splitlines()
    return "\n".join(lines[i + 1] for i, l in enumerate(lines[:-1]) if l in (".TP", ".TQ"))


def settings_keys(header):
    text = open(header, encoding="utf-8").read()
    keys = set(re.findall(r'kSchemaKey = "([^"]+)"', text))
    for body in re.findall(r"SpecialKey \w+\[\] = \{(.*?)\n\};", text, re.S):
        keys.update(re.findall(r'\{"([^"]+)"', body))
    for body in re.findall(r"std::string_view \w+\[\] = \{(.*?)\};", text, re.S):
        keys.update(re.findall(r'"([^"]+)"', body))
    return keys


def render_warnings(page):
    found = []
    groff = subprocess.run(["groff", "-ww", "-z", "-man", page], capture_output=True, text=True)
    if groff.returncode != 0 or groff.stderr:
        found.append(f"groff -ww: {groff.stderr.strip() or groff.returncode}")
    if shutil.which("man"):
        env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
        man = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                             env=env)
        if man.returncode != 0 or man.stderr:
            found.append(f"man --warnings: {man.stderr.strip() or man.returncode}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--options")
    parser.add_argument("--src")
    parser.add_argument("--bin")
    parser.add_argument("--version")
    args = parser.parse_args()
    if args.options:
        print("\n".join(sorted(help_options(args.options))))
        return 0
    if not (args.src and args.bin and args.version):
        parser.error("--src, --bin and --version are needed")
    man_dir = os.path.join(args.src, "packaging", "man")
    errors = []

    for program, page in PAGES.items():
        options = help_options(os.path.join(args.bin, program))
        if len(options) < MIN_OPTIONS[program]:
            errors.append(f"{program} --help: only {sorted(options)} found; has its layout changed?")
        tags = item_tags(os.path.join(man_dir, page))
        for option in sorted(options):
            if not re.search(r"(?<![\w\\-])" + re.escape(roff(option)) + r"(?![\w\\])", tags):
                errors.append(f"{page}: has no item for {option} (from {program} --help)")

    keys = settings_keys(os.path.join(args.src, "libsrt", "src", "config", "settings_keys.h"))
    if len(keys) < 30:
        errors.append(f"settings_keys.h: only {len(keys)} keys found; has its layout changed?")
    text = open(os.path.join(man_dir, "srt-settings.5"), encoding="utf-8").read()
    for key in sorted(keys):
        if not re.search(r"(?<![\w$])" + re.escape(key) + r"(?!\w)", text):
            errors.append(f"srt-settings.5: does not describe the settings key {key}")

    for page in sorted(os.listdir(man_dir)):
        errors += [f"{page}: {w}" for w in render_warnings(os.path.join(man_dir, page))]

    changelog = os.path.join(args.src, "packaging", "deb", "changelog")
    first = open(changelog, encoding="utf-8").readline()
    m = re.match(r"srt-sandbox \(([^)-]+)-[^)]+\)", first)
    if not m or m.group(1) != args.version:
        errors.append(f"packaging/deb/changelog: the first entry is {m.group(1) if m else first!r}, "
                      f"not {args.version}: add an entry for this version")

    for e in errors:
        print(e)
    print(f"docs: {len(PAGES)} option lists, {len(keys)} settings keys, "
          f"{len(os.listdir(man_dir))} pages: {'FAILED' if errors else 'ok'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
