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

// --- Exact sampling of irrational probabilities --------------------------------------
//
// k-ary randomized response keeps the true option with probability e^ε/(e^ε + k − 1) and
// the Laplace mechanism's noise is geometric with α = e^(−ε/(upper − lower)): both are
// irrational, so no fraction and no floating-point comparison samples them exactly.
// A float ε is itself an exact dyadic rational, and Bernoulli(e^(−γ)) for a rational γ
// can be sampled exactly with fair integer draws only (Canonne, Kamath & Steinke, "The
// Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1 and 2), with
// BigInt arithmetic so that nothing is rounded (Mironov 2012 shows what rounding leaks).

/** The float x as an exact fraction [num, den] of BigInts (den a power of two). */
export function exactRational(x) {
  if (typeof x !== "number" || !Number.isFinite(x) || x < 0) {
    throw new RangeError(`need a finite non-negative number, got ${x}`);
  }
  let den = 1n;
  while (!Number.isInteger(x)) {
    x *= 2; // exact: doubling a float never rounds
    den *= 2n;
  }
  return [BigInt(x), den];
}

/** A uniform BigInt in [0, den) by rejection from 32-bit words: no modulo bias. */
export function uniformBigBelow(den, next) {
  if (den <= 2n ** 32n) return BigInt(uniformBelow(Number(den), next));
  const bits = den.toString(2).length;
  const words = Math.ceil(bits / 32);
  const mask = (1n << BigInt(bits)) - 1n;
  for (;;) {
    let x = 0n;
    for (let i = 0; i < words; i++) x = (x << 32n) | BigInt(next());
    x &= mask;
    if (x < den) return x;
  }
}

/** true with probability num/den (BigInts, 0 ≤ num ≤ den), exactly. */
export function bernoulliRational(num, den, next) {
  return uniformBigBelow(den, next) < num;
}

/** true with probability e^(−num/den) (BigInts), exactly (CKS 2020, Algorithm 1). */
export function bernoulliExp(num, den, next) {
  while (num > den) {
    // e^(−γ) = e^(−1) · e^(−(γ − 1))
    if (!bernoulliExp(1n, 1n, next)) return false;
    num -= den;
  }
  let k = 1n;
  while (bernoulliRational(num, den * k, next)) k += 1n;
  return k % 2n === 1n;
}

/**
 * A geometric variable G ≥ 0 with P(G = g) ∝ e^(−g·s/t) (BigInts s, t > 0), exactly:
 * CKS 2020 Algorithm 2's one-sided part. U uniform in [0, t) kept with probability
 * e^(−U/t), V counts e^(−1) successes, and ⌊(U + tV)/s⌋ is the geometric variable.
 */
export function geometricExp(s, t, next) {
  let u;
  do u = uniformBigBelow(t, next);
  while (!bernoulliExp(u, t, next));
  let v = 0n;
  while (bernoulliExp(1n, 1n, next)) v += 1n;
  return Number((u + t * v) / s);
}

// --- The designs ---------------------------------------------------------------------

function binaryTruth(value) {
  if (value !== 0 && value !== 1) throw new RangeError("true answer must be 0 or 1");
  return value;
}

// Both true answers of a design that also asks an innocuous question: sensitive + 2 · innocuous.
function pairTruth(value) {
  if (![0, 1, 2, 3].includes(value)) throw new RangeError("true answers must be sensitive + 2 · innocuous, from 0 to 3");
  return value;
}

function optionTruth(value, k) {
  if (!Number.isInteger(value) || value < 0 || value >= k) {
    throw new RangeError(`true option must be an index from 0 to ${k - 1}, got ${value}`);
  }
  return value;
}

function optionsCount(k) {
  if (!Number.isInteger(k) || k < 2 || k > 10) {
    throw new RangeError(`a choice question has 2 to 10 options, got ${k}`);
  }
  return k;
}

/** An index drawn with the given probabilities, exactly up to their fractions. */
export function die(probabilities, next) {
  const fractions = probabilities.map((p) => toFraction(p).map(BigInt));
  const den = fractions.reduce((acc, [, d]) => (acc * d) / bigGcd(acc, d), 1n);
  const total = fractions.reduce((acc, [n, d]) => acc + (n * den) / d, 0n);
  if (total !== den) throw new RangeError("the die's probabilities must sum to 1");
  let x = uniformBigBelow(den, next);
  for (let j = 0; j < fractions.length; j++) {
    const share = (fractions[j][0] * den) / fractions[j][1];
    if (x < share) return j;
    x -= share;
  }
  throw new Error("unreachable: the shares sum to the denominator");
}

function bigGcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * The binary designs the server knows, by name. Each takes the true answer, the design's
 * parameters and a random source, flips every one of its coins, and returns the report
 * and the coins (for display only: coins are never sent).
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
  // The respondent answers "same or different?" themselves; this draws the innocuous
  // statement (true with probability p) for simulated respondents and the tests.
  crosswise(trueAnswer, { p }, next) {
    const innocuous = Number(bernoulli(p, next));
    return { report: Number(innocuous === trueAnswer), coins: [innocuous === 1] };
  },
  direct(trueAnswer) {
    return { report: trueAnswer, coins: [] };
  },
};

/**
 * Designs with arms: the arm is drawn first, from arm_weights and independently of the
 * true answer, and the answer is then randomized with that arm's parameters. The arm is
 * sent with the report (it is no more than a die thrown before looking at the answer).
 */
export const armDesigns = {
  // A non-carrier answers the question with probability p of the arm, else says "yes".
  stochastic_lie_detector(trueAnswer, { p, arm_weights }, next) {
    const arm = die(arm_weights, next);
    const answers = bernoulli(p[arm], next);
    return { report: answers ? trueAnswer : 1, arm, coins: [arm, answers] };
  },
  // Forced response with the arm's two coins.
  cheating_detection(trueAnswer, { p_truth, p_yes, arm_weights }, next) {
    const arm = die(arm_weights, next);
    const truthful = bernoulli(p_truth[arm], next);
    const forcedYes = bernoulli(p_yes[arm], next);
    return { report: truthful ? trueAnswer : Number(forcedYes), arm, coins: [arm, truthful, forcedYes] };
  },
};

/**
 * Designs with arms that also ask an innocuous question: the true value holds both answers
 * (sensitive + 2 · innocuous); the arm's coin decides which of the two is sent.
 */
export const pairedDesigns = {
  unrelated_question_unknown(truth, { p_truth, arm_weights }, next) {
    const arm = die(arm_weights, next);
    const sensitive = bernoulli(p_truth[arm], next);
    return { report: sensitive ? truth % 2 : truth >> 1, arm, coins: [arm, sensitive] };
  },
};

/** Samplers by kind and design name: (true value, parameters, next) → { report, coins }. */
export const samplers = {
  binary: Object.fromEntries(
    Object.entries({ ...designs, ...armDesigns }).map(([name, sample]) => [
      name,
      (value, params, next) => sample(binaryTruth(value), params, next),
    ]).concat(
      Object.entries(pairedDesigns).map(([name, sample]) => [
        name,
        (value, params, next) => sample(pairTruth(value), params, next),
      ]),
    ),
  ),
  choice: {
    // Propose an option uniformly and keep it with probability P(r|x)/max = 1 for the true
    // option, e^(−ε) for the others: the kept option has exactly the k-RR law, and the
    // number of proposals does not depend on the true option.
    k_rr(value, { epsilon, k }, next) {
      optionTruth(value, optionsCount(k));
      const [num, den] = exactRational(epsilon);
      let proposals = 0;
      for (;;) {
        proposals++;
        const option = uniformBelow(k, next);
        if (option === value || bernoulliExp(num, den, next)) return { report: option, coins: [proposals] };
      }
    },
    forced_response(value, { p_truth, p_forced }, next) {
      optionTruth(value, optionsCount(p_forced.length));
      const truthful = bernoulli(p_truth, next);
      const face = die(p_forced, next);
      return { report: truthful ? value : face, coins: [truthful, face] };
    },
    direct(value, { k }) {
      return { report: optionTruth(value, optionsCount(k)), coins: [] };
    },
  },
  number: {
    // Clip, then add the difference of two exact geometric variables: two-sided
    // geometric noise P(Z = z) ∝ α^|z| with α = e^(−ε/(upper − lower)).
    laplace(value, { epsilon, lower, upper }, next) {
      const clipped = clipNumber(value, lower, upper);
      const [num, den] = exactRational(epsilon);
      const s = num;
      const t = den * BigInt(upper - lower);
      const noise = geometricExp(s, t, next) - geometricExp(s, t, next);
      return { report: clipped + noise, coins: [noise] };
    },
    // Duchi et al.'s one bit: round the clipped value to 1 with probability
    // (x − lower)/(upper − lower) (rational, exact), then keep that bit with probability
    // 1/(1 + e^(−ε)) by two-option k-RR (propose a bit uniformly, keep the rounded one, the
    // other with probability e^(−ε)). P(1 | x) = c + t·u with t = tanh(ε/2).
    one_bit(value, { epsilon, lower, upper }, next) {
      const clipped = clipNumber(value, lower, upper);
      const bit = Number(bernoulliRational(BigInt(clipped - lower), BigInt(upper - lower), next));
      const [num, den] = exactRational(epsilon);
      for (;;) {
        const proposal = uniformBelow(2, next);
        if (proposal === bit || bernoulliExp(num, den, next)) return { report: proposal, coins: [bit] };
      }
    },
    direct(value, { lower, upper }) {
      if (!Number.isInteger(value) || value < lower || value > upper) {
        throw new RangeError(`the answer must be a whole number from ${lower} to ${upper}`);
      }
      return { report: value, coins: [] };
    },
  },
};

function clipNumber(value, lower, upper) {
  if (!Number.isInteger(value)) throw new RangeError(`the answer must be a whole number, got ${value}`);
  return Math.min(upper, Math.max(lower, value));
}

/** Randomize one true value with the design (kind, name) and its parameters. */
export function sample(kind, name, params, value, next = cryptoSource()) {
  const sampler = samplers[kind]?.[name];
  if (!sampler) throw new Error(`unknown design ${kind}/${name}`);
  return sampler(value, params, next);
}

/**
 * A split ballot's draw, made before the respondent answers and independently of
 * anything they say: 1 (asked directly) with probability directShare, else 0 (randomized).
 */
export function drawBallot(directShare, next = cryptoSource()) {
  if (!(directShare > 0 && directShare < 1)) throw new RangeError(`direct_share must lie strictly between 0 and 1, got ${directShare}`);
  return Number(bernoulli(directShare, next));
}

/**
 * A split-ballot question's outcome on the drawn ballot: asked directly, the answer is
 * the report, with no coins; else the design randomizes it. The ballot is sent as the arm.
 */
export function sampleOnBallot(ballot, kind, name, params, value, next = cryptoSource()) {
  if (ballot === 1) return { report: value, arm: 1, coins: [] };
  return { ...sample(kind, name, params, value, next), arm: 0 };
}

/** Randomize one true answer (0 or 1) with the named binary design. */
export function randomize(designName, params, trueAnswer, next = cryptoSource()) {
  const design = designs[designName];
  if (!design) throw new Error(`unknown design ${designName}`);
  return design(binaryTruth(trueAnswer), params, next);
}

/** Count reports of "yes" over n simulated respondents with the same true answer. */
export function countYes(designName, params, trueAnswer, n, next = cryptoSource()) {
  let yes = 0;
  for (let i = 0; i < n; i++) yes += randomize(designName, params, trueAnswer, next).report;
  return yes;
}

/**
 * Check parameters against a design's declaration (the server's Param.to_json list):
 * the browser refuses what the server would refuse. Returns a list of messages.
 */
export function checkParams(declaration, params) {
  const errors = [];
  for (const p of declaration.parameters) {
    const value = params[p.name];
    if (p.type === "probabilities" || p.type === "probability_pair") {
      if (value === undefined && p.default === null) continue;
      if (!Array.isArray(value) || !value.every((v) => typeof v === "number" && v >= 0 && v <= 1)) {
        errors.push(`${p.name} must be a list of probabilities`);
      } else if (p.type === "probability_pair" && value.length !== 2) {
        errors.push(`${p.name} must be two probabilities, one per arm`);
      } else if (p.type === "probabilities" && Math.abs(value.reduce((a, b) => a + b, 0) - 1) > 1e-9) {
        errors.push(`${p.name} must sum to 1`);
      }
      continue;
    }
    if (typeof value !== "number" || !Number.isFinite(value)) {
      errors.push(`${p.name} must be a finite number`);
      continue;
    }
    if (p.type === "integer" && !Number.isInteger(value)) errors.push(`${p.name} must be a whole number`);
    if (p.min !== null && (value < p.min || (p.exclusive_min && value === p.min))) {
      errors.push(`${p.name} must be ${p.exclusive_min ? ">" : "≥"} ${p.min}`);
    }
    if (p.max !== null && (value > p.max || (p.exclusive_max && value === p.max))) {
      errors.push(`${p.name} must be ${p.exclusive_max ? "<" : "≤"} ${p.max}`);
    }
  }
  return errors;
}

/** The items in a uniformly random order (Fisher–Yates). */
export function shuffle(items, next = cryptoSource()) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = uniformBelow(i + 1, next);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
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
