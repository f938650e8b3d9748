"""One-time credentials for invite-only surveys: RFC 9474 blind RSA, the server's side.

An invite is exchanged for a credential once; the credential, not the invite, admits one
submission. With JavaScript the respondent's browser makes a random message, blinds it,
and has the server sign the blinded value (:func:`blind_sign`): the server never sees the
message it signed, so no one — not the server's code at the moment of the exchange, nor
anyone holding the database and logs later — can tell which invite a credential came
from. The credential is an ordinary RSASSA-PSS signature (:func:`verify`).

Variant: RSABSSA-SHA384-PSS-Deterministic (RFC 9474 §5): SHA-384, MGF1-SHA-384, a 48-byte
salt, and no message preparation. The Randomized variants prepend 32 random bytes to
the message so that a low-entropy message cannot be guessed; our messages are already
32 random bytes (:data:`MESSAGE_BYTES`), for which RFC 9474's security considerations
(message entropy) say the prefix adds nothing. The salted PSS keeps the signature a
standard one, which ``cryptography`` verifies and also makes directly (the no-JavaScript
path, :func:`sign`).

References
----------
F. Denis, F. Jacobs, C. A. Wood, "RSA Blind Signatures", RFC 9474, 2023.
K. Moriarty et al., "PKCS #1: RSA Cryptography Specifications Version 2.2", RFC 8017, 2016.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from dataclasses import dataclass
from functools import lru_cache

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

KEY_BITS = 2048  # RFC 9474's minimum; keeps the browser's modular arithmetic quick
PUBLIC_EXPONENT = 65537
SALT_BYTES = 48
MESSAGE_BYTES = 32
PSS = padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=SALT_BYTES)
# Longest base64url text a field may carry: a 4096-bit value is 683 characters.
MAX_ENCODED = 700


class BadCredential(ValueError):
    """A credential or blinded message that is not even well formed."""


def b64encode(data: bytes) -> str:
    """base64url without padding, as the browser sends it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64decode(text: object, field: str) -> bytes:
    if not isinstance(text, str) or not 0 < len(text) <= MAX_ENCODED:
        raise BadCredential(f"{field} must be base64url text of at most {MAX_ENCODED} characters.")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise BadCredential(f"{field} is not valid base64url.") from None


@dataclass(frozen=True)
class Credential:
    """A one-time pass: a random message and the survey key's signature on it."""

    message: bytes
    signature: bytes

    @classmethod
    def parse(cls, data: object) -> Credential:
        """From ``{"message": …, "signature": …}`` (base64url); :class:`BadCredential`."""
        if not isinstance(data, dict):
            raise BadCredential("credential must be an object with message and signature.")
        message = b64decode(data.get("message"), "credential.message")
        if len(message) != MESSAGE_BYTES:
            raise BadCredential(f"credential.message must be {MESSAGE_BYTES} bytes.")
        return cls(message, b64decode(data.get("signature"), "credential.signature"))

    def as_json(self) -> dict[str, str]:
        return {"message": b64encode(self.message), "signature": b64encode(self.signature)}

    def spent_id(self, survey_id: int) -> str:
        """What is kept once it is spent: a hash that only refuses a second use."""
        return hashlib.sha256(f"{survey_id}:".encode() + self.message).hexdigest()


def new_private_key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=KEY_BITS)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@lru_cache(maxsize=64)
def load_private_key(pem: str) -> rsa.RSAPrivateKey:
    """Parsing checks the key, which costs more than signing: once per key and process."""
    return serialization.load_pem_private_key(pem.encode(), password=None)


def public_key_fields(key: rsa.RSAPrivateKey) -> dict[str, str]:
    """The public key as the browser reads it (base64url big-endian n and e) and its
    fingerprint: the SHA-256 of its SubjectPublicKeyInfo, which anyone can recompute."""
    public = key.public_key()
    numbers = public.public_numbers()
    spki = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    digest = hashlib.sha256(spki).hexdigest()
    return {
        "n": b64encode(numbers.n.to_bytes(modulus_bytes(public), "big")),
        "e": b64encode(numbers.e.to_bytes(3, "big")),
        "fingerprint": " ".join(digest[i : i + 4] for i in range(0, 32, 4)),
        "fingerprint_full": digest,
    }


def modulus_bytes(key: rsa.RSAPublicKey) -> int:
    return (key.key_size + 7) // 8


def blind_sign(key: rsa.RSAPrivateKey, blinded_message: bytes) -> bytes:
    """RFC 9474 §4.3 BlindSign: the raw RSA signature of a blinded message, checked
    against the public key before it leaves (so a fault cannot leak the private key)."""
    private = key.private_numbers()
    public = private.public_numbers
    size = modulus_bytes(key.public_key())
    m = int.from_bytes(blinded_message, "big")
    if len(blinded_message) != size or not 0 < m < public.n:
        raise BadCredential(f"blinded_message must be {size} bytes, below the key's modulus.")
    # Chinese remainder theorem: about three times faster than pow(m, d, n).
    s1, s2 = pow(m, private.dmp1, private.p), pow(m, private.dmq1, private.q)
    s = s2 + private.q * ((private.iqmp * (s1 - s2)) % private.p)
    if pow(s, public.e, public.n) != m:
        raise RuntimeError("RSA blind signature failed its own check")
    return s.to_bytes(size, "big")


def sign(key: rsa.RSAPrivateKey) -> Credential:
    """A credential the server makes itself (the no-JavaScript and API-invite paths):
    a fresh random message signed directly. Nothing about it is stored."""
    message = secrets.token_bytes(MESSAGE_BYTES)
    return Credential(message, key.sign(message, PSS, hashes.SHA384()))


def verify(key: rsa.RSAPrivateKey, credential: Credential) -> bool:
    """Standard RSASSA-PSS verification (SHA-384, MGF1-SHA-384, 48-byte salt)."""
    try:
        key.public_key().verify(credential.signature, credential.message, PSS, hashes.SHA384())
    except InvalidSignature:
        return False
    return True
