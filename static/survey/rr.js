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

/** A probability given with up to 9 decimals as an exact fraction [num, den]. */
export function toFraction(p) {
  if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
    throw new RangeError(`probability must be between 0 and 1, got ${p}`);
  }
  const den = 1e9;
  const num = Math.round(p * den);
  const g = gcd(num, den);
  return [num / g, den / g];
}

/** A uniform integer in [0, den) by rejection sampling: no modulo bias. */
export function uniformBelow(den, next) {
  const limit = Math.floor(2 ** 32 / den) * den;
  for (;;) {
    const x = next();
    if (x < limit) return x % den;
  }
}

/** true with probability p, exactly (a fair coin uses one random bit). */
export function bernoulli(p, next) {
  const [num, den] = toFraction(p);
  return uniformBelow(den, next) < num;
}

/** The designs the server knows, by name: each returns the report and its coins. */
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
