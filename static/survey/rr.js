// Randomized response in the respondent's browser.
//
// Pure functions with the randomness injected (`next` returns a uniform 32-bit integer),
// so the same code is unit-tested with forced values and run with crypto.getRandomValues.
// Math.random is never used. Every design flips all of its coins on every call, so the
// work done does not depend on how the coins fall.

/** A source of uniform 32-bit integers from the Web Crypto API. */
export function cryptoSource() {
  const buffer = new Uint32Array(64);
  let index = buffer.length;
  return function next() {
    if (index === buffer.length) {
      crypto.getRandomValues(buffer);
      index = 0;
    }
    return buffer[index++];
  };
}

function gcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}

const fractions = new Map();

/** The simplest fraction [num, den] equal to p: exact for 1/3 or 1/6, else 9 decimals. */
export function toFraction(p) {
  if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
    throw new RangeError(`probability must be between 0 and 1, got ${p}`);
  }
  if (!fractions.has(p)) fractions.set(p, simplestFraction(p));
  return fractions.get(p);
}

function simplestFraction(p) {
  for (let den = 1; den <= 1000; den++) {
    const num = Math.round(p * den);
    if (Math.abs(num / den - p) < 1e-12) return [num, den];
  }
  const num = Math.round(p * 1e9);
  const g = gcd(num, 1e9);
  return [num / g, 1e9 / g];
}

/**
 * A uniform integer in [0, den) by rejection sampling: no modulo bias.
 * When den divides 2^32 (a fair coin: den = 2) nothing is ever rejected, so a fair coin
 * costs exactly one random bit's worth of one draw.
 */
export function uniformBelow(den, next) {
  const limit = Math.floor(2 ** 32 / den) * den;
  for (;;) {
    const x = next();
    if (x < limit) return x % den;
  }
}

/** true with probability p, exactly (up to p's fraction). */
export function bernoulli(p, next) {
  const [num, den] = toFraction(p);
  return uniformBelow(den, next) < num;
}

/**
 * The designs the server knows, by name. Each takes the true answer, the design's
 * parameters and a random source, flips every one of its coins, and returns the report
 * and the coins (for display only: coins are never sent). A new design (k-ary randomized
 * response, the Laplace mechanism) is one more entry with the same shape.
 */
export const designs = {
  forced_response(trueAnswer, { p_truth, p_yes }, next) {
    const truthful = bernoulli(p_truth, next);
    const forcedYes = bernoulli(p_yes, next);
    return { report: truthful ? trueAnswer : Number(forcedYes), coins: [truthful, forcedYes] };
  },
  mirrored(trueAnswer, { p }, next) {
    const truthful = bernoulli(p, next);
    return { report: truthful ? trueAnswer : 1 - trueAnswer, coins: [truthful] };
  },
  unrelated_question(trueAnswer, { p_truth, pi }, next) {
    const truthful = bernoulli(p_truth, next);
    const innocuousYes = bernoulli(pi, next);
    return { report: truthful ? trueAnswer : Number(innocuousYes), coins: [truthful, innocuousYes] };
  },
};

/** Randomize one true answer (0 or 1) with the named design. */
export function randomize(designName, params, trueAnswer, next = cryptoSource()) {
  const design = designs[designName];
  if (!design) throw new Error(`unknown design ${designName}`);
  if (trueAnswer !== 0 && trueAnswer !== 1) throw new RangeError("true answer must be 0 or 1");
  return design(trueAnswer, params, next);
}

/** Count reports of "yes" over n simulated respondents with the same true answer. */
export function countYes(designName, params, trueAnswer, n, next = cryptoSource()) {
  let yes = 0;
  for (let i = 0; i < n; i++) yes += randomize(designName, params, trueAnswer, next).report;
  return yes;
}

/** A random (version 4) UUID; crypto.randomUUID is missing on plain-http pages. */
export function uuid4(next = cryptoSource()) {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i += 4) {
    const word = next();
    bytes[i] = word & 255;
    bytes[i + 1] = (word >>> 8) & 255;
    bytes[i + 2] = (word >>> 16) & 255;
    bytes[i + 3] = word >>> 24;
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
