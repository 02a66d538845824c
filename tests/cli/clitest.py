"""What the twag CLI test scripts share: the twag binary, a seeded random
source (TWAG_TEST_SEED to repeat a run), pass/fail counting, running twag
(an argument longer than one argv entry may be goes through "@FILE") and
reading its NAME=value output.
"""
import atexit
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TWAG = os.environ.get("TWAG", os.path.join(ROOT, "build", "twag"))
ARG_MAX = 100000  # hex longer than this goes through "@FILE" (Linux: 128 KiB per argument)


class Suite:
    def __init__(self, name):
        self.name = name
        self.seed = int(os.environ.get("TWAG_TEST_SEED", random.randrange(1 << 30)))
        self.rng = random.Random(self.seed)
        self.passed = self.failed = 0
        self.tmp = tempfile.mkdtemp(prefix=f"twag-{name}-")
        atexit.register(shutil.rmtree, self.tmp, True)
        print(f"note: {name}_test: TWAG_TEST_SEED={self.seed}")

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {self.name}: {what}")
        return ok

    def run(self, *args, stdin=None, timeout=60):
        argv = []
        for i, a in enumerate(args):
            if len(a) > ARG_MAX:
                path = os.path.join(self.tmp, f"arg{i}.hex")
                with open(path, "w") as f:
                    f.write(a + "\n")
                a = "@" + path
            argv.append(a)
        p = subprocess.run([TWAG, *argv], capture_output=True, text=True, timeout=timeout,
                           input=stdin)
        return p.returncode, p.stdout, p.stderr

    def twag(self, *args):
        rc, out, err = self.run(*args)
        if rc != 0:
            self.check(False, f"twag {' '.join(a[:40] for a in args)} exited {rc}: {err.strip()}")
            return {}
        return kv(out)

    def finish(self):
        print(f"{self.name}_test: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed or not self.passed else 0)


def kv(out):
    return dict(line.split("=", 1) for line in out.strip().split("\n") if "=" in line)


def ecies_open(hn, eph, ct, tag):
    """The home network side of the TS 33.501 C.3.3 ECIES with Python
    cryptography only: hn an X25519 or P-256 private key object, eph the
    ephemeral public key as sent. The plaintext, or None if the tag does
    not verify."""
    from cryptography.hazmat.primitives import hashes, hmac as chmac
    from cryptography.hazmat.primitives.asymmetric import ec, x25519
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.kdf.x963kdf import X963KDF
    if isinstance(hn, x25519.X25519PrivateKey):
        z = hn.exchange(x25519.X25519PublicKey.from_public_bytes(eph))
    else:
        z = hn.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), eph))
    k = X963KDF(algorithm=hashes.SHA256(), length=64, sharedinfo=eph).derive(z)
    h = chmac.HMAC(k[32:], hashes.SHA256())
    h.update(ct)
    if h.finalize()[:8] != tag:
        return None
    d = Cipher(algorithms.AES(k[:16]), modes.CTR(k[16:32])).decryptor()
    return d.update(ct) + d.finalize()
