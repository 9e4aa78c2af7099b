#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""layering.py against small trees made here: it must fail on each kind of difference."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "layering.py")


class LayeringTest(unittest.TestCase):
    def tree(self, files, table):
        root = tempfile.mkdtemp(prefix="layering-")
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        with open(os.path.join(root, "edges.txt"), "w") as f:
            f.write(table)
        subprocess.run(["git", "init", "-q", root], check=True)
        return root

    def check(self, root):
        r = subprocess.run([sys.executable, TOOL, "check", "--root", root, "--table",
                            os.path.join(root, "edges.txt")], capture_output=True, text=True)
        return r.returncode, r.stdout

    FILES = {
        "libsrt/src/base/strings.h": "#pragma once\n",
        "libsrt/src/policy/policy.cc": '#include "policy/policy.h"\n#include "base/strings.h"\n',
        "libsrt/src/policy/policy.h": "#pragma once\n",
    }

    def test_a_tree_that_keeps_its_table_passes(self):
        rc, out = self.check(self.tree(self.FILES, "policy -> base\n"))
        self.assertEqual(rc, 0, out)

    def test_an_edge_added_by_hand_fails(self):
        files = dict(self.FILES)
        files["libsrt/src/base/strings.cc"] = '#include "policy/policy.h"\n'
        rc, out = self.check(self.tree(files, "policy -> base\n"))
        self.assertEqual(rc, 1)
        self.assertIn("base -> policy is not in edges.txt: libsrt/src/base/strings.cc:1", out)

    def test_a_row_no_include_uses_fails(self):
        rc, out = self.check(self.tree(self.FILES, "policy -> base\nbwrap -> policy\n"))
        self.assertEqual(rc, 1)
        self.assertIn("edges.txt:2: bwrap -> policy is used by no include", out)

    def test_an_include_of_no_file_fails(self):
        files = dict(self.FILES)
        files["libsrt/src/policy/glob.cc"] = '#include "policy/gone.h"\n'
        rc, out = self.check(self.tree(files, "policy -> base\n"))
        self.assertEqual(rc, 1)
        self.assertIn('libsrt/src/policy/glob.cc:1: #include "policy/gone.h" names no file', out)


if __name__ == "__main__":
    unittest.main()
