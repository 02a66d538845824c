#!/usr/bin/env python3
"""Copies the NIST CAVP response files used by tests/unit/test_cavp.c from
Debian's python3-cryptography-vectors into this directory, each with a
'# source:' header naming its origin and what was kept.

    python3 tests/vectors/cavp/subset.py [VECTORS_DIR]

VECTORS_DIR defaults to the package's cryptography_vectors directory. Files
are copied unchanged (CRLF line ends kept) apart from the header lines and,
where said in the header, whole sections or whole trials left out:
  - GCM: only [IVlen = 96] sections (the API takes 96-bit IVs only); of
    those, every count of the Taglen = 128/96/64 sections (the tag lengths
    the API accepts) and the first 2 counts of the other Taglen sections
    (which the API must refuse);
  - KW/KWP: every trial of each plaintext length except 4096 bits, whose
    first 20 trials are kept (the 4096-bit trials are 80% of each file).
"""
import os
import re
import sys

PKG = "python3-cryptography-vectors 38.0.4 (Debian 12)"
src = sys.argv[1] if len(sys.argv) > 1 else "/usr/lib/python3/dist-packages/cryptography_vectors"
dst = os.path.dirname(os.path.abspath(__file__))


def header(lines, nl):
    return "".join("# " + l + nl if l else "#" + nl for l in lines)


def split_blocks(text):
    """Splits a response file at blank lines into blocks (lists of lines)."""
    return re.split(r"(?:\r?\n){2,}", text)


def copy(rel, out, note, keep=None):
    with open(os.path.join(src, rel), newline="") as f:
        text = f.read()
    nl = "\r\n" if "\r\n" in text else "\n"
    if keep is not None:
        text = keep(text, nl)
    head = header(["source: " + note, "via " + PKG + ", path cryptography_vectors/" + rel, ""], nl)
    with open(os.path.join(dst, out), "w", newline="") as f:
        f.write(head + text)


def gcm_keep(text, nl):
    # Blocks: header comments, runs of "[x = y]" lines, "Count = " trials.
    out = []
    iv = tag = None
    kept = 0
    for b in split_blocks(text):
        if b.startswith("["):
            iv = int(re.search(r"\[IVlen = (\d+)\]", b).group(1))
            tag = int(re.search(r"\[Taglen = (\d+)\]", b).group(1))
            kept = 0
            if iv == 96:
                out.append(b)
            continue
        if b.startswith("Count"):
            if iv != 96:
                continue
            if tag in (128, 96, 64) or kept < 2:
                out.append(b)
                kept += 1
            continue
        out.append(b)
    return (nl + nl).join(out) + nl


def kw_keep(text, nl):
    out = []
    bits = None
    kept = 0
    for b in split_blocks(text):
        m = re.match(r"\[PLAINTEXT LENGTH = (\d+)\]", b)
        if m:
            bits = int(m.group(1))
            kept = 0
            out.append(b)
            continue
        if b.startswith("COUNT"):
            if bits != 4096 or kept < 20:
                out.append(b)
                kept += 1
            continue
        out.append(b)
    return (nl + nl).join(out) + nl


for k in ("128", "256"):
    copy("ciphers/AES/GCM/gcmEncryptExtIV%s.rsp" % k, "gcmEncryptExtIV%s.rsp" % k,
         "NIST CAVP GCM test vectors (gcmtestvectors.zip), gcmEncryptExtIV%s.rsp; subset: "
         "the [IVlen = 96] sections only, every count of Taglen 128/96/64, the first 2 "
         "counts of the other Taglen sections (tests/vectors/cavp/subset.py)" % k, gcm_keep)
    copy("ciphers/AES/GCM/gcmDecrypt%s.rsp" % k, "gcmDecrypt%s.rsp" % k,
         "NIST CAVP GCM test vectors (gcmtestvectors.zip), gcmDecrypt%s.rsp with its FAIL "
         "cases; subset: the [IVlen = 96] sections only, every count of Taglen 128/96/64, "
         "the first 2 counts of the other Taglen sections (tests/vectors/cavp/subset.py)" % k,
         gcm_keep)
    for t in ("VADT", "VNT", "VPT", "VTT", "DVPT"):
        copy("ciphers/AES/CCM/%s%s.rsp" % (t, k), "%s%s.rsp" % (t, k),
             "NIST CAVP CCM test vectors (ccmtestvectors.zip), %s%s.rsp, complete" % (t, k))
for k in ("128", "192", "256"):
    for t in ("KW_AE", "KW_AD", "KWP_AE", "KWP_AD"):
        copy("keywrap/kwtestvectors/%s_%s.txt" % (t, k), "%s_%s.txt" % (t, k),
             "NIST CAVP SP 800-38F key wrap test vectors (kwtestvectors.zip), %s_%s.txt; "
             "subset: every trial of each plaintext length but 4096 bits, of which the "
             "first 20 (tests/vectors/cavp/subset.py)" % (t, k), kw_keep)
for h in ("rfc-2202-sha1.txt", "rfc-2202-md5.txt", "rfc-4231-sha256.txt"):
    rfc = "RFC 2202 §3 (HMAC-SHA-1)" if "sha1" in h else (
        "RFC 2202 §2 (HMAC-MD5)" if "md5" in h else "RFC 4231 §4 (HMAC-SHA-256)")
    copy("HMAC/" + h, h, rfc + " test cases, complete as packaged (" + h + ")")
