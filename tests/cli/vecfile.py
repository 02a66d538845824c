"""Reader for twag's plain-text vector files (tests/vectors/*.vec).

Cases are separated by blank lines; "key = value" lines; values are hex,
"quoted text" or decimal; every case carries a "# source:" line.
"""


def read_cases(path):
    cases, cur, line_no, start = [], {}, 0, 0
    source = None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for line_no, raw in enumerate(lines + [""], 1):
        line = raw.strip()
        if not line:
            if cur:
                cur["_line"] = start
                cur["_source"] = source
                cases.append(cur)
            cur, source, start = {}, None, 0
            continue
        if not start:
            start = line_no
        if line.startswith("#"):
            if line.startswith("# source:"):
                source = line[9:].strip()
            continue
        key, _, val = line.partition("=")
        val = val.strip()
        if len(val) >= 2 and val[0] == '"' and val[-1] == '"':
            val = val[1:-1]
        cur[key.strip()] = val
    return cases
