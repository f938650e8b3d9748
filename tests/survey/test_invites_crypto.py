"""The blind RSA both sides run (RFC 9474, RSABSSA-SHA384-PSS-Deterministic): the
server's BlindSign against the RFC's vector, a reference client used by the other invite
tests, and the browser's credential.js against the server's `cryptography` verification."""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from survey import invites

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests/js/rfc9474_vectors.json").read_text())["vectors"]
VECTOR = next(v for v in VECTORS if v["name"] == "RSABSSA-SHA384-PSS-Deterministic")


def mgf1(seed: bytes, length: int) -> bytes:
    blocks = b"".join(
        hashlib.sha384(seed + i.to_bytes(4, "big")).digest() for i in range(length // 48 + 1)
    )
    return blocks[:length]


def pss_encode(message: bytes, em_bits: int, salt: bytes) -> bytes:
    """EMSA-PSS-ENCODE (RFC 8017 §9.1.1) with SHA-384: the reference the tests blind with."""
    em_len = (em_bits + 7) // 8
    h = hashlib.sha384(b"\0" * 8 + hashlib.sha384(message).digest() + salt).digest()
    db = b"\0" * (em_len - len(salt) - 50) + b"\x01" + salt
    masked = bytearray(a ^ b for a, b in zip(db, mgf1(h, em_len - 49), strict=True))
    masked[0] &= 0xFF >> (8 * em_len - em_bits)
    return bytes(masked) + h + b"\xbc"


def blind(n: int, e: int, message: bytes, salt: bytes, r: int) -> tuple[bytes, int]:
    """RFC 9474 §4.2 Blind with a given salt and blinding factor."""
    m = int.from_bytes(pss_encode(message, n.bit_length() - 1, salt), "big")
    size = (n.bit_length() + 7) // 8
    return ((m * pow(r, e, n)) % n).to_bytes(size, "big"), pow(r, -1, n)


def finalize(n: int, blind_signature: bytes, inv: int) -> bytes:
    size = (n.bit_length() + 7) // 8
    return ((int.from_bytes(blind_signature, "big") * inv) % n).to_bytes(size, "big")


class Browser:
    """What credential.js does, in Python: the respondent side of the exchange."""

    def __init__(self, public: dict[str, str]):
        self.n = int.from_bytes(invites.b64decode(public["n"], "n"), "big")
        self.e = int.from_bytes(invites.b64decode(public["e"], "e"), "big")
        self.message = secrets.token_bytes(invites.MESSAGE_BYTES)
        r = secrets.randbelow(self.n - 2) + 2
        self.blinded, self.inv = blind(self.n, self.e, self.message, secrets.token_bytes(48), r)

    @property
    def blinded_message(self) -> str:
        return invites.b64encode(self.blinded)

    def credential(self, blind_signature: str) -> dict[str, str]:
        signature = finalize(self.n, invites.b64decode(blind_signature, "sig"), self.inv)
        return invites.Credential(self.message, signature).as_json()


def vector_key() -> rsa.RSAPrivateKey:
    p, q, d, e, n = (int(VECTOR[k], 16) for k in ("p", "q", "d", "e", "n"))
    public = rsa.RSAPublicNumbers(e, n)
    return rsa.RSAPrivateNumbers(
        p,
        q,
        d,
        rsa.rsa_crt_dmp1(d, p),
        rsa.rsa_crt_dmq1(d, q),
        rsa.rsa_crt_iqmp(p, q),
        public,
    ).private_key()


def test_the_reference_client_reproduces_the_rfc_vector():
    n, e, inv = int(VECTOR["n"], 16), int(VECTOR["e"], 16), int(VECTOR["inv"], 16)
    message, salt = bytes.fromhex(VECTOR["msg"]), bytes.fromhex(VECTOR["salt"])
    assert pss_encode(message, n.bit_length() - 1, salt).hex() == VECTOR["encoded_msg"]
    blinded, got_inv = blind(n, e, message, salt, pow(inv, -1, n))
    assert (blinded.hex(), got_inv) == (VECTOR["blinded_msg"], inv)


def test_blind_sign_gives_the_rfc_vectors_blind_signature_and_it_unblinds_to_a_pss_signature():
    key = vector_key()
    blind_signature = invites.blind_sign(key, bytes.fromhex(VECTOR["blinded_msg"]))
    assert blind_signature.hex() == VECTOR["blind_sig"]
    signature = finalize(
        key.public_key().public_numbers().n, blind_signature, int(VECTOR["inv"], 16)
    )
    assert signature.hex() == VECTOR["sig"]
    assert invites.verify(key, invites.Credential(bytes.fromhex(VECTOR["msg"]), signature))


@pytest.mark.parametrize(
    "blinded",
    [b"", b"\x01" * 511, b"\xff" * 512, b"\0" * 512],
    ids=["empty", "short", "above-the-modulus", "zero"],
)
def test_blind_sign_refuses_what_is_not_a_blinded_message(blinded):
    with pytest.raises(invites.BadCredential):
        invites.blind_sign(vector_key(), blinded)


def test_a_credential_the_server_signs_itself_verifies_and_a_changed_one_does_not():
    key = invites.load_private_key(invites.new_private_key_pem())
    credential = invites.sign(key)
    assert len(credential.message) == invites.MESSAGE_BYTES
    assert invites.verify(key, credential)
    other = invites.Credential(secrets.token_bytes(32), credential.signature)
    assert not invites.verify(key, other)
    assert not invites.verify(key, invites.Credential(credential.message, credential.signature[1:]))


@pytest.mark.parametrize(
    "data",
    [
        None,
        "text",
        {"message": "AAAA"},
        {"message": "!!!", "signature": "AAAA"},
        {"message": invites.b64encode(b"x" * 31), "signature": "AAAA"},
        {"message": invites.b64encode(b"x" * 32), "signature": "A" * 5000},
        {"message": invites.b64encode(b"x" * 32), "signature": 7},
    ],
)
def test_a_malformed_credential_is_refused_before_any_check(data):
    with pytest.raises(invites.BadCredential):
        invites.Credential.parse(data)


def run_node(script: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed for the JavaScript tests (apt-get install nodejs)")
    result = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_browsers_credential_verifies_with_the_servers_cryptography():
    """credential.js blinds for a fresh server key; the server blind-signs; the browser
    unblinds and verifies; `cryptography`'s standard RSASSA-PSS verification accepts it."""
    key = invites.load_private_key(invites.new_private_key_pem())
    public = invites.public_key_fields(key)
    module = (ROOT / "static/survey/credential.js").as_uri()
    blinding = run_node(
        f"""
        import * as c from {json.dumps(module)};
        const key = c.publicKey({json.dumps(public["n"])}, {json.dumps(public["e"])});
        const message = c.cryptoBytes(32);
        const {{ blindedMessage, inv }} = await c.blind(key, message);
        console.log(JSON.stringify({{ message: c.toBase64url(message),
          blinded: c.toBase64url(blindedMessage), inv: inv.toString() }}));
        """
    )
    state = json.loads(blinding)
    blind_signature = invites.blind_sign(key, invites.b64decode(state["blinded"], "blinded"))
    signature = run_node(
        f"""
        import * as c from {json.dumps(module)};
        const key = c.publicKey({json.dumps(public["n"])}, {json.dumps(public["e"])});
        const sig = await c.finalize(key, c.fromBase64url({json.dumps(state["message"])}),
          c.fromBase64url({json.dumps(invites.b64encode(blind_signature))}), {state["inv"]}n);
        console.log(c.toBase64url(sig));
        """
    ).strip()
    credential = invites.Credential.parse({"message": state["message"], "signature": signature})
    assert invites.verify(key, credential)
