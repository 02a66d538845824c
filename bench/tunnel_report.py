#!/usr/bin/env python3
"""The tables and plots of bench/tunnel.sh (Python 3, standard library only).

tunnel_report.py --meta META.tsv --rows ROWS.tsv --points POINTS.tsv --out DIR

META.tsv   key<TAB>value lines (date, commit, machine, versions, clk_tck, ...)
ROWS.tsv   row<TAB>status<TAB>note: status "ok", "skipped", "failed" or
           "not available"
POINTS.tsv row<TAB>size<TAB>status<TAB>busy0<TAB>total0<TAB>busy1<TAB>total1<TAB>wall_s
           (/proc/stat ticks of all CPUs before and after the iperf3 client)
DIR/raw/ROW-SIZE.json  the client's iperf3 -J output of each point

Writes DIR/tunnel.json, tunnel.csv, tunnel.md and, with gnuplot, demand.svg
(service demand vs send size) and throughput.svg.

Service demand = busy CPU µs of the whole machine / KB delivered (1 KB =
1024 B, the receiver's byte count); utilisation = busy / total ticks of all
CPUs over the same window.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

# ratio table: (numerator row, denominator row), at the send sizes nearest
# the study's 1500-byte and 16384-byte sends
RATIOS = [
    ("twag-aes-gcm-128", "openvpn-aes256gcm"),
    ("twag-aes-gcm-128", "wireguard-go"),
    ("twag-aes-gcm-256", "openvpn-aes256gcm"),
    ("twag-null", "veth"),
]
RATIO_SIZES = (1500, 16384)


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def point(meta, rec, raw_dir):
    row, size, status = rec[0], int(rec[1]), rec[2]
    b0, t0, b1, t1 = (int(x) for x in rec[3:7])
    wall = float(rec[7]) if rec[7] not in ("", "-") else 0.0
    clk = int(meta.get("clk_tck", "100"))
    p = {"size": size, "status": status, "wall_s": round(wall, 3)}
    busy, total = b1 - b0, t1 - t0
    js = None
    path = os.path.join(raw_dir, f"{row}-{size}.json")
    try:
        with open(path, encoding="utf-8") as f:
            js = json.load(f)
    except (OSError, ValueError):
        pass
    if js and js.get("error"):
        p["status"] = "failed: " + js["error"]
    end = (js or {}).get("end", {})
    recv = end.get("sum_received", {})
    sent = end.get("sum_sent", {})
    nbytes = int(recv.get("bytes", 0))
    secs = float(recv.get("seconds", 0.0))
    if p["status"] == "ok" and (nbytes == 0 or secs <= 0):
        p["status"] = "failed: nothing delivered"
    p.update({
        "bytes": nbytes,
        "seconds": round(secs, 3),
        "retransmits": sent.get("retransmits"),
        "busy_us": busy * 1e6 / clk,
        "total_us": total * 1e6 / clk,
        "iperf3_cpu_client_pct": end.get("cpu_utilization_percent", {}).get("host_total"),
        "iperf3_cpu_server_pct": end.get("cpu_utilization_percent", {}).get("remote_total"),
    })
    if p["status"] == "ok":
        p["mbps"] = nbytes * 8 / secs / 1e6
        p["util_pct"] = 100.0 * busy / total if total > 0 else None
        p["demand_us_per_kb"] = p["busy_us"] / (nbytes / 1024.0)
    else:
        p["mbps"] = p["util_pct"] = p["demand_us_per_kb"] = None
    return p


def fmt(v, nd):
    return "—" if v is None else f"{v:.{nd}f}"


def nearest(sizes, want):
    return min(sizes, key=lambda s: (abs(s - want), s)) if sizes else None


def markdown(meta, rows, sizes):
    idle = None
    try:
        it = int(meta["idle_total_ticks"])
        idle = 100.0 * int(meta["idle_busy_ticks"]) / it if it else None
    except (KeyError, ValueError):
        pass
    out = ["# Tunnel sizing study", ""]
    out += [
        f"- date: {meta.get('date', '?')}",
        f"- commit: {meta.get('commit', '?')}",
        f"- machine: {meta.get('cpu', '?')}, {meta.get('cores', '?')} CPUs, Linux {meta.get('kernel', '?')}",
        f"- versions: {meta.get('iperf3', '?')}; {meta.get('openvpn', '?')}; "
        f"wireguard-go {meta.get('wireguard-go', '?').replace('wireguard-go ', '')}; "
        f"twag-tunnel: {meta.get('twag-tunnel', '?')}",
        f"- iperf3 TCP, one stream, {meta.get('time', '?')} s per point, `-l` = send size; "
        f"twag ESP encapsulation: {meta.get('encap', '?')}, twag-tunnel arguments: {meta.get('twag_args', '(none)')}",
        f"- machine CPU with nothing of the study running (2 s before it): "
        f"{fmt(idle, 1)} % (not subtracted below)",
    ]
    if idle is not None and idle > 5.0:
        out += [f"- **the machine was not idle before the run ({idle:.1f} % busy): other work "
                "on it counts in every figure below; re-run on a quiet machine**"]
    out += [
        "",
        "CPU is the whole machine's (/proc/stat, all CPUs, everything but idle "
        "and iowait) over each iperf3 client run; utilisation is of all CPUs "
        "together (100 % = every CPU busy); service demand = busy CPU µs per KB "
        "delivered (1 KB = 1024 B, the receiver's count).",
        "",
        "## Rows",
        "",
        "| row | status | note | machine CPU, tunnel up and idle (1 s) |",
        "|---|---|---|---:|",
    ]
    for r in rows:
        bg = r.get("idle_cpu_pct")
        out.append(f"| {r['name']} | {r['status']} | {r['note']} | {'' if bg is None else f'{bg:.1f} %'} |")
    measured = [r for r in rows if r["status"] == "ok"]
    tables = [
        ("Throughput, Mbit/s (receiver)", "mbps", 0),
        ("CPU utilisation of the machine, %", "util_pct", 1),
        ("Service demand, µs of CPU per KB delivered", "demand_us_per_kb", 3),
    ]
    for title, key, nd in tables:
        out += ["", f"## {title}", "", "| row | " + " | ".join(f"{s}" for s in sizes) + " |",
                "|---|" + "---:|" * len(sizes)]
        for r in measured:
            by = {p["size"]: p for p in r["points"]}
            cells = []
            for s in sizes:
                p = by.get(s)
                if p is None:
                    cells.append("")
                elif p["status"] != "ok":
                    cells.append("failed")
                else:
                    cells.append(fmt(p[key], nd))
            out.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    fails = [(r["name"], p["size"], p["status"]) for r in measured for p in r["points"] if p["status"] != "ok"]
    if fails:
        out += ["", "Failed points: " + "; ".join(f"{n} -l {s}: {st}" for n, s, st in fails)]
    out += ["", "## Ratios", "",
            "Service demand and throughput of the first row over the second "
            "(demand below 1: the first row costs less CPU per KB).", "",
            "| rows | send size | demand µs/KB | ratio of demand | Mbit/s | ratio of throughput |",
            "|---|---:|---:|---:|---:|---:|"]
    byname = {r["name"]: r for r in measured}
    for a, b in RATIOS:
        for want in RATIO_SIZES:
            s = nearest(sizes, want)
            pa = pb = None
            if a in byname and b in byname:
                pa = {p["size"]: p for p in byname[a]["points"]}.get(s)
                pb = {p["size"]: p for p in byname[b]["points"]}.get(s)
            if not (pa and pb and pa["status"] == "ok" and pb["status"] == "ok"):
                missing = [n for n in (a, b) if n not in byname]
                why = f"not measured: {', '.join(missing)}" if missing else "a point failed"
                out.append(f"| {a} / {b} | {s} | | {why} | | |")
                continue
            out.append(
                f"| {a} / {b} | {s} | {fmt(pa['demand_us_per_kb'], 3)} / {fmt(pb['demand_us_per_kb'], 3)} | "
                f"**{pa['demand_us_per_kb'] / pb['demand_us_per_kb']:.2f}** | "
                f"{fmt(pa['mbps'], 0)} / {fmt(pb['mbps'], 0)} | {pa['mbps'] / pb['mbps']:.2f} |")
    return "\n".join(out) + "\n"


def gp_str(s):
    return '"' + s.replace('"', "").replace("\\", "") + '"'


def plots(outdir, rows, sizes):
    if not shutil.which("gnuplot"):
        return "gnuplot not found (Debian gnuplot-nox): no plots"
    measured = [r for r in rows if r["status"] == "ok"]
    if not measured:
        return "no measured rows: no plots"
    dat = os.path.join(outdir, "tunnel.dat")
    with open(dat, "w", encoding="utf-8") as f:
        for r in measured:  # one gnuplot index per row
            f.write(f"# {r['name']}\n")
            for p in r["points"]:
                if p["status"] == "ok":
                    f.write(f"{p['size']} {p['demand_us_per_kb']:.6f} {p['mbps']:.3f}\n")
            f.write("\n\n")
    gp = os.path.join(outdir, "tunnel.gp")
    # a label for each size, unless it would run into the previous one
    # (1500 beside 2048): a bare tic there
    tics, last = [], None
    for s in sorted(sizes):
        lab = "" if last is not None and s < last * 1.5 else str(s)
        tics.append(f'"{lab}" {s}')
        if lab:
            last = s
    xt = ", ".join(tics)
    common = [
        "set terminal svg size 960,600 dynamic enhanced font 'sans,11' background rgb 'white'",
        "set logscale x 2", f"set xtics ({xt})",
        f"set xrange [{min(sizes) / 1.3}:{max(sizes) * 1.3}]", "set xlabel 'TCP send size, bytes (iperf3 -l)'",
        "set grid", "set key outside right top", "set datafile separator whitespace",
    ]
    lines = []
    lines += common
    lines += [f"set output {gp_str(os.path.join(outdir, 'demand.svg'))}",
              "set title 'Service demand: CPU µs of the whole machine per KB delivered'",
              "set ylabel 'µs / KB'", "set logscale y",
              "plot " + ", ".join(f"{gp_str(dat)} index {i} using 1:2 with linespoints title {gp_str(r['name'])}"
                                  for i, r in enumerate(measured))]
    lines += ["unset logscale y",
              f"set output {gp_str(os.path.join(outdir, 'throughput.svg'))}",
              "set title 'Throughput (receiver), one TCP stream'", "set ylabel 'Mbit/s'", "set yrange [0:*]",
              "plot " + ", ".join(f"{gp_str(dat)} index {i} using 1:3 with linespoints title {gp_str(r['name'])}"
                                  for i, r in enumerate(measured))]
    with open(gp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    res = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if res.returncode != 0:
        return f"gnuplot failed: {res.stderr.strip()[-300:]}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meta", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--points", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    meta = {k: (v[0] if v else "") for k, *v in read_tsv(a.meta)}
    sizes = [int(s) for s in meta.get("sizes", "").split()]
    raw = os.path.join(a.out, "raw")
    rows = []
    for rec in read_tsv(a.rows):
        bg = None
        if len(rec) > 3 and rec[3]:
            bg = float(rec[3])
        rows.append({"name": rec[0], "status": rec[1], "note": rec[2] if len(rec) > 2 else "",
                     "idle_cpu_pct": bg, "points": []})
    byname = {r["name"]: r for r in rows}
    for rec in read_tsv(a.points):
        if rec[0] in byname:
            byname[rec[0]]["points"].append(point(meta, rec, raw))

    md = markdown(meta, rows, sizes)
    note = plots(a.out, rows, sizes)
    if note:
        md += f"\n{note}\n"
        print(f"tunnel_report.py: {note}", file=sys.stderr)
    else:
        md += "\nPlots: [demand.svg](demand.svg), [throughput.svg](throughput.svg)\n"
    with open(os.path.join(a.out, "tunnel.md"), "w", encoding="utf-8") as f:
        f.write(md)
    with open(os.path.join(a.out, "tunnel.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
    cols = ["row", "size", "status", "mbps", "util_pct", "demand_us_per_kb", "bytes", "seconds",
            "busy_us", "total_us", "wall_s", "retransmits", "iperf3_cpu_client_pct", "iperf3_cpu_server_pct"]
    with open(os.path.join(a.out, "tunnel.csv"), "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            if not r["points"]:
                w.writerow([r["name"], "", r["note"] or r["status"]]
                           + [""] * (len(cols) - 3))
            for p in r["points"]:
                w.writerow([r["name"]] + [("" if p.get(c) is None else
                                           (f"{p[c]:.4f}" if isinstance(p.get(c), float) else p[c]))
                                          for c in cols[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
