#!/usr/bin/python3
"""mancheck.py PAGE PROGRAM: every option PROGRAM --help prints (a word
"--name") is in the roff source of PAGE, written "\\-\\-name" or "--name",
with font escapes left out. Prints one line "missing: ..." or "ok N
options"; exit 1 when one is missing or --help prints none."""
import re
import subprocess
import sys


def main():
    page, prog = sys.argv[1], sys.argv[2:]
    with open(page, encoding="utf-8") as f:
        src = f.read()
    text = re.sub(r"\\f[BIRP]|\\f\(..|\\f\[[^]]*\]", "", src).replace("\\-", "-")
    out = subprocess.run(prog + ["--help"], capture_output=True, text=True, timeout=10).stdout
    opts = sorted(set(re.findall(r"(?<![A-Za-z0-9-])--[a-z0-9][a-z0-9-]*", out)))
    missing = [o for o in opts if not re.search(re.escape(o) + r"(?![a-z0-9-])", text)]
    if not opts:
        print(f"{prog[0]} --help printed no option")
        return 1
    if missing:
        print("missing: " + " ".join(missing))
        return 1
    print(f"ok {len(opts)} options")
    return 0


if __name__ == "__main__":
    sys.exit(main())
