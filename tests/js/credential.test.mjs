// Unit tests for the browser's blind RSA (RFC 9474), run with node's built-in test runner.
// The fixed vectors are RFC 9474 Appendix A's; the server's `cryptography` checks the same
// code's output in tests/survey/test_invites_crypto.py.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  blind,
  bytesToInt,
  emsaPssEncode,
  ExchangeError,
  finalize,
  forgetCredential,
  fromBase64url,
  intToBytes,
  keptCredential,
  modInverse,
  modPow,
  obtainCredential,
  randomBelow,
  toBase64url,
  verify,
} from "../../static/survey/credential.js";

const source = readFileSync(new URL("../../static/survey/credential.js", import.meta.url), "utf8");
const { vectors } = JSON.parse(readFileSync(new URL("./rfc9474_vectors.json", import.meta.url), "utf8"));
const vector = vectors.find((v) => v.name === "RSABSSA-SHA384-PSS-Deterministic");
const randomized = vectors.find((v) => v.name === "RSABSSA-SHA384-PSS-Randomized");

const hex = (text) => Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const keyOf = (v) => {
  const n = BigInt(v.n);
  const bits = n.toString(2).length;
  return { n, e: BigInt(v.e), bits, length: Math.ceil(bits / 8) };
};

/** A random source that hands out the given byte strings in order, then fails loudly. */
function forced(...chunks) {
  let i = 0;
  return (length) => {
    if (i >= chunks.length) throw new Error("ran out of forced random bytes");
    const chunk = chunks[i++];
    assert.equal(chunk.length, length);
    return Uint8Array.from(chunk);
  };
}

/** A toy signer holding the vector's private key, as the server would. */
const signBlinded = (v, blinded) => intToBytes(modPow(bytesToInt(blinded), BigInt(v.d), BigInt(v.n)), keyOf(v).length);

test("the module never calls Math.random and imports nothing", () => {
  assert.doesNotMatch(source, /Math\.random\s*\(/);
  assert.doesNotMatch(source, /^\s*import\b/m);
});

test("EMSA-PSS encoding matches RFC 9474's vector", async () => {
  const key = keyOf(vector);
  const encoded = await emsaPssEncode(hex(vector.msg), key.bits - 1, hex(vector.salt));
  assert.equal(toHex(encoded), vector.encoded_msg);
});

test("blinding with the vector's salt and factor gives its blinded message", async () => {
  const key = keyOf(vector);
  const r = modInverse(BigInt(vector.inv), key.n);
  const random = forced(hex(vector.salt), intToBytes(r, key.length));
  const { blindedMessage, inv } = await blind(key, hex(vector.msg), random);
  assert.equal(toHex(blindedMessage), vector.blinded_msg);
  assert.equal(inv, BigInt(vector.inv));
});

test("finalizing the vector's blind signature gives its signature, which verifies", async () => {
  for (const v of [vector, randomized]) {
    const key = keyOf(v);
    const signature = await finalize(key, hex(v.input_msg), hex(v.blind_sig), BigInt(v.inv));
    assert.equal(toHex(signature), v.sig, v.name);
    assert.ok(await verify(key, hex(v.input_msg), signature));
  }
});

test("a signature on another message, or altered by one bit, does not verify", async () => {
  const key = keyOf(vector);
  const signature = hex(vector.sig);
  const other = hex(vector.msg);
  other[0] ^= 1;
  assert.equal(await verify(key, other, signature), false);
  signature[signature.length - 1] ^= 1;
  assert.equal(await verify(key, hex(vector.msg), signature), false);
  assert.equal(await verify(key, hex(vector.msg), signature.slice(1)), false);
});

test("finalize refuses a blind signature that is not the key's", async () => {
  const key = keyOf(vector);
  const wrong = hex(vector.blind_sig);
  wrong[10] ^= 0x40;
  await assert.rejects(finalize(key, hex(vector.msg), wrong, BigInt(vector.inv)), /invalid signature/);
  await assert.rejects(finalize(key, hex(vector.msg), wrong.slice(2), BigInt(vector.inv)), /input size/);
});

test("a fresh random blinding still unblinds into a valid signature", async () => {
  const key = keyOf(vector);
  const message = crypto.getRandomValues(new Uint8Array(32));
  const { blindedMessage, inv } = await blind(key, message);
  assert.notEqual(toHex(blindedMessage), vector.blinded_msg);
  const signature = await finalize(key, message, signBlinded(vector, blindedMessage), inv);
  assert.ok(await verify(key, message, signature));
});

test("the blinding factor is rejection-sampled: out-of-range draws are thrown away", () => {
  const n = 1000n; // 10 bits: two bytes, the top six bits masked off
  const draws = forced([0xff, 0xff], [0x00, 0x00], [0x03, 0xe8], [0x01, 0xf4]);
  assert.equal(randomBelow(n, draws), 500n); // 1023 ≥ n, 0, 1000 ≥ n rejected
});

test("modInverse inverts, and says when there is no inverse", () => {
  assert.equal(modInverse(3n, 11n), 4n);
  assert.equal(modInverse(6n, 9n), null);
});

test("base64url round-trips without padding", () => {
  const bytes = Uint8Array.from([251, 255, 191, 0, 1]);
  assert.equal(toBase64url(bytes), "-_-_AAE");
  assert.deepEqual(fromBase64url("-_-_AAE"), bytes);
});

function memoryStorage() {
  const items = new Map();
  return {
    items,
    getItem: (k) => (items.has(k) ? items.get(k) : null),
    setItem: (k, v) => items.set(k, String(v)),
    removeItem: (k) => items.delete(k),
  };
}

test("obtainCredential exchanges the invite once, keeps the credential, and forgets it", async () => {
  const key = keyOf(vector);
  const storage = memoryStorage();
  const sent = [];
  const post = async (url, body) => {
    sent.push({ url, body });
    return { ok: true, status: 201, data: { blind_signature: toBase64url(signBlinded(vector, fromBase64url(body.blinded_message))) } };
  };
  const options = { slug: "abc", invite: "tok", url: "/x/", key, storage, post };
  const first = await obtainCredential(options);
  assert.ok(await verify(key, fromBase64url(first.message), fromBase64url(first.signature)));
  assert.equal(fromBase64url(first.message).length, 32);
  assert.deepEqual(Object.keys(sent[0].body).sort(), ["blinded_message", "invite"]);
  assert.ok(!JSON.stringify(sent).includes(first.message));
  assert.deepEqual(await obtainCredential(options), first);
  assert.equal(sent.length, 1);
  assert.deepEqual([...storage.items.keys()], ["deniable:credential:abc"]);
  assert.deepEqual(keptCredential(storage, "abc"), first);
  assert.equal(keptCredential(storage, "other"), null);
  forgetCredential(storage, "abc");
  assert.equal(storage.items.size, 0);
  assert.equal(keptCredential(storage, "abc"), null);
});

test("a refused exchange throws with its status and keeps nothing", async () => {
  const storage = memoryStorage();
  const post = async () => ({ ok: false, status: 403, data: { invite: ["used"] } });
  const options = { slug: "refused", invite: "tok", url: "/x/", key: keyOf(vector), storage, post };
  await assert.rejects(obtainCredential(options), (error) => error instanceof ExchangeError && error.status === 403);
  assert.equal(storage.items.size, 0);
});

test("a lost answer is asked for again with the same blinded message, never a new one", async () => {
  const storage = memoryStorage();
  const bodies = [];
  const statuses = [0, 503, 503, 503, 0, 201];
  const post = async (url, body) => {
    bodies.push(JSON.stringify(body));
    const status = statuses[bodies.length - 1];
    if (status !== 201) return { ok: false, status, data: {} };
    const signed = signBlinded(vector, fromBase64url(body.blinded_message));
    return { ok: true, status, data: { blind_signature: toBase64url(signed) } };
  };
  const options = { slug: "flaky", invite: "tok", url: "/x/", key: keyOf(vector), storage, post, waitMs: 0 };
  await assert.rejects(obtainCredential(options), (error) => error.status === 503);
  const credential = await obtainCredential(options); // e.g. the next press of the button
  assert.equal(bodies.length, 6);
  assert.equal(new Set(bodies).size, 1);
  assert.ok(await verify(keyOf(vector), fromBase64url(credential.message), fromBase64url(credential.signature)));
});
