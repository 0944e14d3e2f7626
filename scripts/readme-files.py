#!/usr/bin/env python3
"""Checks that every Swift file README.md names exists in the tree.

`Name.swift` must be some file's name, `Folder/Name.swift` the end of some
file's path, and a `+Suffix` (or `+Suffix.swift`) shorthand some extension
file's suffix. Prints what it does not find; exits 1 if anything is missing.
Run from the repository's root: `python3 scripts/readme-files.py`.
"""
import os
import re
import subprocess
import sys

text = open("README.md", encoding="utf-8").read()
files = subprocess.run(
    ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.swift"],
    capture_output=True, text=True, check=True,
).stdout.split()
names = {os.path.basename(f) for f in files}
suffixes = {m.group(1) for f in names if (m := re.search(r"(\+[A-Za-z0-9]+)\.swift$", f))}

missing = []
for mention in sorted(set(re.findall(r"[A-Za-z0-9_+/]*[A-Za-z0-9_]\.swift|\+[A-Za-z0-9]+\.swift|`\+[A-Za-z0-9]+`", text))):
    mention = mention.strip("`")
    if mention.startswith("+"):
        found = mention.removesuffix(".swift") in suffixes
    elif "/" in mention:
        found = any(f == mention or f.endswith("/" + mention) for f in files)
    else:
        found = mention in names
    if not found:
        missing.append(mention)

for mention in missing:
    print(f"README.md names {mention}, which is not in the tree")
sys.exit(1 if missing else 0)
