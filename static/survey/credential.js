// One-time credentials for invite-only surveys: RFC 9474 blind RSA, the browser's side
// (variant RSABSSA-SHA384-PSS-Deterministic: SHA-384, MGF1-SHA-384, 48-byte salt; the
// message is 32 random bytes, so it needs no randomizing prefix).
//
// The browser makes a random message, blinds it with a random factor only it knows, and
// sends the blinded value with the invite. The server uses up the invite and signs the
// blinded value; unblinding gives an ordinary RSASSA-PSS signature on the message, which
// the server has never seen. The submission carries (message, signature): the server can
// check it is genuine and unused, but not which invite it came from.
//
// References: RFC 9474 (RSA Blind Signatures) §4; RFC 8017 (PKCS #1 v2.2) §9.1, B.2.1.

const HASH_BYTES = 48;
const SALT_BYTES = 48;
export const MESSAGE_BYTES = 32;

/** Random bytes from the platform's CSPRNG; tests inject fixed ones instead. */
export const cryptoBytes = (length) => crypto.getRandomValues(new Uint8Array(length));

export function bytesToInt(bytes) {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

export function intToBytes(value, length) {
  if (value < 0n || value >> BigInt(8 * length) !== 0n) throw new RangeError("integer too large");
  const bytes = new Uint8Array(length);
  for (let i = length - 1; i >= 0; i--, value >>= 8n) bytes[i] = Number(value & 0xffn);
  return bytes;
}

export function bitLength(value) {
  return value === 0n ? 0 : value.toString(2).length;
}

export function modPow(base, exponent, modulus) {
  let result = 1n;
  base %= modulus;
  for (; exponent > 0n; exponent >>= 1n, base = (base * base) % modulus) {
    if (exponent & 1n) result = (result * base) % modulus;
  }
  return result;
}

/** a⁻¹ mod n by the extended Euclidean algorithm; null when gcd(a, n) ≠ 1. */
export function modInverse(a, n) {
  let [oldR, r, oldS, s] = [((a % n) + n) % n, n, 1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return oldR === 1n ? ((oldS % n) + n) % n : null;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export async function sha384(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-384", bytes));
}

/** MGF1 with SHA-384 (RFC 8017 B.2.1). */
export async function mgf1(seed, length) {
  const blocks = [];
  for (let counter = 0; blocks.length * HASH_BYTES < length; counter++) {
    blocks.push(await sha384(concat(seed, intToBytes(BigInt(counter), 4))));
  }
  return concat(...blocks).slice(0, length);
}

const xor = (a, b) => a.map((byte, i) => byte ^ b[i]);

/** EMSA-PSS-ENCODE (RFC 8017 §9.1.1) for an emBits-bit encoding with the given salt. */
export async function emsaPssEncode(message, emBits, salt) {
  const emLength = Math.ceil(emBits / 8);
  if (emLength < HASH_BYTES + salt.length + 2) throw new RangeError("encoding error");
  const mHash = await sha384(message);
  const h = await sha384(concat(new Uint8Array(8), mHash, salt));
  const db = concat(new Uint8Array(emLength - salt.length - HASH_BYTES - 2), [1], salt);
  const maskedDb = xor(db, await mgf1(h, emLength - HASH_BYTES - 1));
  maskedDb[0] &= 0xff >> (8 * emLength - emBits);
  return concat(maskedDb, h, [0xbc]);
}

/** EMSA-PSS-VERIFY (RFC 8017 §9.1.2) with a 48-byte salt. */
export async function emsaPssVerify(message, encoded, emBits) {
  const emLength = Math.ceil(emBits / 8);
  const topBits = 0xff >> (8 * emLength - emBits);
  if (encoded.length !== emLength || emLength < HASH_BYTES + SALT_BYTES + 2) return false;
  if (encoded[emLength - 1] !== 0xbc) return false;
  const maskedDb = encoded.slice(0, emLength - HASH_BYTES - 1);
  const h = encoded.slice(emLength - HASH_BYTES - 1, emLength - 1);
  if (maskedDb[0] & ~topBits) return false;
  const db = xor(maskedDb, await mgf1(h, maskedDb.length));
  db[0] &= topBits;
  const padding = emLength - HASH_BYTES - SALT_BYTES - 2;
  if (db.slice(0, padding).some((byte) => byte !== 0) || db[padding] !== 1) return false;
  const salt = db.slice(padding + 1);
  const expected = await sha384(concat(new Uint8Array(8), await sha384(message), salt));
  return expected.every((byte, i) => byte === h[i]);
}

/** The survey's public key from the page's base64url n and e. */
export function publicKey(nText, eText) {
  const n = bytesToInt(fromBase64url(nText));
  return { n, e: bytesToInt(fromBase64url(eText)), bits: bitLength(n), length: Math.ceil(bitLength(n) / 8) };
}

/** RSASSA-PSS-VERIFY (RFC 8017 §8.1.2): is ``signature`` the key's on ``message``? */
export async function verify(key, message, signature) {
  if (signature.length !== key.length) return false;
  const s = bytesToInt(signature);
  if (s >= key.n) return false;
  const m = modPow(s, key.e, key.n);
  const emLength = Math.ceil((key.bits - 1) / 8);
  if (m >> BigInt(8 * emLength) !== 0n) return false;
  return emsaPssVerify(message, intToBytes(m, emLength), key.bits - 1);
}

/** A uniform integer in [1, n) by rejection sampling: no modulo bias. */
export function randomBelow(n, randomBytes) {
  const length = Math.ceil(bitLength(n) / 8);
  const topBits = 0xff >> (8 * length - bitLength(n));
  for (;;) {
    const bytes = randomBytes(length);
    bytes[0] &= topBits;
    const value = bytesToInt(bytes);
    if (value > 0n && value < n) return value;
  }
}

/** RFC 9474 §4.2 Blind: the value to send, and the inverse that unblinds the answer. */
export async function blind(key, message, randomBytes = cryptoBytes) {
  const encoded = await emsaPssEncode(message, key.bits - 1, randomBytes(SALT_BYTES));
  const m = bytesToInt(encoded);
  if (modInverse(m, key.n) === null) throw new Error("invalid input");
  for (;;) {
    const r = randomBelow(key.n, randomBytes);
    const inv = modInverse(r, key.n);
    if (inv !== null) {
      const blinded = (m * modPow(r, key.e, key.n)) % key.n;
      return { blindedMessage: intToBytes(blinded, key.length), inv };
    }
  }
}

/** RFC 9474 §4.4 Finalize: unblind and verify; throws unless the signature is genuine. */
export async function finalize(key, message, blindSignature, inv) {
  if (blindSignature.length !== key.length) throw new Error("unexpected input size");
  const z = bytesToInt(blindSignature);
  if (z >= key.n) throw new Error("unexpected input size");
  const signature = intToBytes((z * inv) % key.n, key.length);
  if (!(await verify(key, message, signature))) throw new Error("invalid signature");
  return signature;
}

export function toBase64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64url(text) {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** A refusal or failure of the exchange: ``status`` is the HTTP status, 0 offline. */
export class ExchangeError extends Error {
  constructor(status) {
    super(`the invite could not be exchanged (${status || "no connection"})`);
    this.status = status;
  }
}

async function postJson(url, body) {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
    return { ok: response.ok, status: response.status, data: await response.json().catch(() => ({})) };
  } catch {
    return { ok: false, status: 0, data: {} };
  }
}

const memoKey = (slug) => `deniable:credential:${slug}`;
const RETRIES = 3;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The blinding of an exchange not yet answered, per survey: a retry sends the same blinded
// message, which the server signs again, while a different one would find the invite used.
const pending = new Map();

/** POST the exchange, again with the same body while the network or server fails. */
async function exchange(url, body, post, waitMs) {
  let result = await post(url, body);
  for (let attempt = 0; attempt < RETRIES && (result.status === 0 || result.status === 429 || result.status >= 500); attempt++) {
    await pause(waitMs * 2 ** attempt);
    result = await post(url, body);
  }
  return result;
}

/**
 * This device's credential for the survey: the one kept from an earlier visit, else a new
 * one for which the invite is exchanged (and used up). It is kept until it has been
 * spent (see forgetCredential): it says nothing about any answer.
 */
export async function obtainCredential({ slug, invite, url, key, storage, randomBytes = cryptoBytes, post = postJson, waitMs = 1000 }) {
  const kept = keptCredential(storage, slug);
  if (kept) return kept;
  if (!pending.has(slug)) {
    const message = randomBytes(MESSAGE_BYTES);
    pending.set(slug, { message, ...(await blind(key, message, randomBytes)) });
  }
  const { message, blindedMessage, inv } = pending.get(slug);
  const result = await exchange(url, { invite, blinded_message: toBase64url(blindedMessage) }, post, waitMs);
  if (!result.ok || typeof result.data.blind_signature !== "string") throw new ExchangeError(result.status);
  const signature = await finalize(key, message, fromBase64url(result.data.blind_signature), inv);
  pending.delete(slug);
  const credential = { message: toBase64url(message), signature: toBase64url(signature) };
  try {
    storage.setItem(memoKey(slug), JSON.stringify(credential));
  } catch {
    // Storage disabled: the credential lives as long as this page.
  }
  return credential;
}

/** The credential an earlier visit kept on this device for the survey, or null. */
export function keptCredential(storage, slug) {
  try {
    const kept = JSON.parse(storage.getItem(memoKey(slug)));
    if (kept && typeof kept.message === "string" && typeof kept.signature === "string") return kept;
  } catch {
    // Storage disabled or unreadable: nothing usable is kept.
  }
  return null;
}

/** Drop the kept credential once the server has spent it (or refused it for good). */
export function forgetCredential(storage, slug) {
  try {
    storage.removeItem(memoKey(slug));
  } catch {
    // Nothing was kept.
  }
}
