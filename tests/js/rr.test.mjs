// Unit tests for the browser sampler, run with node's built-in test runner
// (`node --test tests/js/`; pytest runs them through tests/js/test_node_unit_tests.py).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  bernoulli,
  bernoulliExp,
  checkParams,
  countYes,
  cryptoSource,
  die,
  drawBallot,
  exactRational,
  geometricExp,
  randomize,
  sample,
  sampleOnBallot,
  shuffle,
  toFraction,
  uniformBelow,
  uniformBigBelow,
  uuid4,
} from "../../static/survey/rr.js";

const source = readFileSync(new URL("../../static/survey/rr.js", import.meta.url), "utf8");
const vectors = JSON.parse(
  readFileSync(new URL("../fixtures/sampler_vectors.json", import.meta.url), "utf8"),
);

/** A random source that returns the given words in order, then fails loudly. */
function forced(...words) {
  let i = 0;
  return () => {
    if (i >= words.length) throw new Error("ran out of forced random words");
    return words[i++];
  };
}

test("the module never calls Math.random", () => {
  assert.doesNotMatch(source, /Math\.random\s*\(/);
});

test("probabilities become their simplest exact fractions", () => {
  assert.deepEqual(toFraction(0.5), [1, 2]);
  assert.deepEqual(toFraction(1 / 3), [1, 3]);
  assert.deepEqual(toFraction(0.0833), [833, 10000]);
  assert.deepEqual(toFraction(1), [1, 1]);
  assert.throws(() => toFraction(1.5), RangeError);
  assert.throws(() => toFraction(Number.NaN), RangeError);
});

test("a fair coin uses one draw and never rejects", () => {
  assert.equal(bernoulli(0.5, forced(0)), true);
  assert.equal(bernoulli(0.5, forced(1)), false);
  assert.equal(bernoulli(0.5, forced(0xffffffff)), false);
  assert.equal(bernoulli(0.5, forced(0xfffffffe)), true);
});

test("non-dyadic probabilities reject the biased top of the 32-bit range", () => {
  const limit = Math.floor(2 ** 32 / 3) * 3;
  // The first word is rejected, the second (0) decides: 0 < 1 → true for p = 1/3.
  assert.equal(uniformBelow(3, forced(limit, 0)), 0);
  assert.equal(bernoulli(1 / 3, forced(limit + 1, 2)), false);
  assert.equal(bernoulli(1 / 3, forced(limit - 3)), true);
});

test("forced response reports the truth when coin 1 says so", () => {
  for (const truth of [0, 1]) {
    const outcome = randomize("forced_response", { p_truth: 0.5, p_yes: 0.5 }, truth, forced(0, 1));
    assert.deepEqual(outcome, { report: truth, coins: [true, false] });
  }
});

test("forced response lets coin 2 decide otherwise, flipping both coins either way", () => {
  const params = { p_truth: 0.5, p_yes: 0.5 };
  assert.deepEqual(randomize("forced_response", params, 0, forced(1, 0)).report, 1);
  assert.deepEqual(randomize("forced_response", params, 1, forced(1, 1)).report, 0);
});

test("the mirrored design reports the opposite when its coin says so", () => {
  assert.equal(randomize("mirrored", { p: 0.75 }, 1, forced(3)).report, 0);
  assert.equal(randomize("mirrored", { p: 0.75 }, 1, forced(2)).report, 1);
});

test("the unrelated question design answers the innocuous question with probability pi", () => {
  const params = { p_truth: 0.5, pi: 0.25 };
  assert.equal(randomize("unrelated_question", params, 0, forced(1, 0)).report, 1);
  assert.equal(randomize("unrelated_question", params, 0, forced(1, 1)).report, 0);
});

test("a design with arms draws the arm from its weights, then randomizes with that arm", () => {
  const params = { p: [0.25, 0.75], arm_weights: [0.5, 0.5] };
  // Arm 1 (second word's coin is 1 of 2), then p = 3/4: word 3 of 4 does not answer → "yes".
  assert.deepEqual(sample("binary", "stochastic_lie_detector", params, 0, forced(1, 3)), { report: 1, arm: 1, coins: [1, false] });
  assert.deepEqual(sample("binary", "stochastic_lie_detector", params, 0, forced(0, 0)).report, 0);
  const cdm = { p_truth: [0.5, 0.75], p_yes: [0.5, 0.5], arm_weights: [0.5, 0.5] };
  assert.equal(sample("binary", "cheating_detection", cdm, 1, forced(0, 1, 1)).arm, 0);
  assert.equal(sample("binary", "cheating_detection", cdm, 1, forced(0, 1, 1)).report, 0);
  assert.throws(() => sample("binary", "stochastic_lie_detector", params, 2, forced(0, 0)), /true answer/);
});

test("the unrelated question with unknown prevalence sends the sensitive or the innocuous answer, as the arm's coin says", () => {
  const params = { p_truth: [0.25, 0.75], arm_weights: [0.5, 0.5] };
  // Truth 2: sensitive "no", innocuous "yes". Arm 1, then word 0 of 4 < 3: the sensitive answer.
  assert.deepEqual(sample("binary", "unrelated_question_unknown", params, 2, forced(1, 0)), { report: 0, arm: 1, coins: [1, true] });
  // Arm 0, then word 1 of 4 is not below 1: the innocuous answer.
  assert.deepEqual(sample("binary", "unrelated_question_unknown", params, 2, forced(0, 1)), { report: 1, arm: 0, coins: [0, false] });
  assert.equal(sample("binary", "unrelated_question_unknown", params, 1, forced(0, 3)).report, 0);
  assert.throws(() => sample("binary", "unrelated_question_unknown", params, 4, forced(0, 0)), /sensitive \+ 2/);
});

test("every path consumes the same number of random words", () => {
  const params = { p_truth: 0.5, p_yes: 0.5 };
  for (const words of [[0, 0], [0, 1], [1, 0], [1, 1]]) {
    const next = forced(...words);
    randomize("forced_response", params, 1, next);
    assert.throws(next, /ran out/);
  }
});

test("bad designs and true answers are refused clearly", () => {
  assert.throws(() => randomize("laplace", {}, 1), /unknown design laplace/);
  assert.throws(() => sample("choice", "dice", {}, 0), /unknown design choice\/dice/);
  assert.throws(() => sample("choice", "k_rr", { epsilon: 1, k: 3 }, 3), /true option/);
  assert.throws(() => sample("choice", "k_rr", { epsilon: 1, k: 11 }, 0), /2 to 10 options/);
  assert.throws(() => sample("number", "laplace", { epsilon: 1, lower: 0, upper: 5 }, 2.5), /whole number/);
  assert.throws(() => sample("number", "direct", { lower: 0, upper: 5 }, 6), /from 0 to 5/);
  assert.throws(() => randomize("mirrored", { p: 0.75 }, 2), /true answer must be 0 or 1/);
});

test("the crypto source yields 32-bit words and uuids are version 4", () => {
  const next = cryptoSource();
  for (let i = 0; i < 200; i++) {
    const word = next();
    assert.ok(Number.isInteger(word) && word >= 0 && word < 2 ** 32);
  }
  assert.match(uuid4(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(uuid4(), uuid4());
});

test("countYes adds up the reports", () => {
  assert.equal(countYes("mirrored", { p: 0.5 }, 1, 3, forced(0, 0, 0)), 3);
});

test("floats are exact dyadic fractions", () => {
  assert.deepEqual(exactRational(0.75), [3n, 4n]);
  assert.deepEqual(exactRational(2), [2n, 1n]);
  const [num, den] = exactRational(Math.log(3));
  assert.equal(Number(num) / Number(den), Math.log(3));
  assert.throws(() => exactRational(-1), RangeError);
});

test("big uniform draws reject the biased top of their bit range", () => {
  // den = 2^32 + 1 needs 33 bits: two words, the first masked to one bit.
  const den = 2n ** 32n + 1n;
  assert.equal(uniformBigBelow(den, forced(1, 0)), 2n ** 32n);
  assert.equal(uniformBigBelow(den, forced(1, 5, 0, 7)), 7n);
});

test("Bernoulli(e^-γ) follows the alternating series exactly on forced draws", () => {
  // γ = 1/2: A1 = Bernoulli(1/2) fails at once (word 1 of a fair coin): K = 1, odd → true.
  assert.equal(bernoulliExp(1n, 2n, forced(1)), true);
  // A1 succeeds (0), A2 = Bernoulli(1/4) fails (3 ≥ 1): K = 2, even → false.
  assert.equal(bernoulliExp(1n, 2n, forced(0, 3)), false);
  assert.equal(bernoulliExp(0n, 1n, forced(0)), true);
});

test("geometric draws and the die have the exact laws on many draws", () => {
  const next = cryptoSource();
  const n = 100_000;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += geometricExp(1n, 2n, next); // α = e^(-1/2)
  const alpha = Math.exp(-0.5);
  const mean = alpha / (1 - alpha);
  const sd = Math.sqrt(alpha) / (1 - alpha);
  assert.ok(Math.abs(sum / n - mean) < vectors.z_limit * (sd / Math.sqrt(n)));
  const counts = [0, 0, 0];
  for (let i = 0; i < n; i++) counts[die([0.5, 1 / 3, 1 / 6], next)]++;
  [0.5, 1 / 3, 1 / 6].forEach((p, j) => {
    assert.ok(Math.abs(counts[j] - n * p) < vectors.z_limit * Math.sqrt(n * p * (1 - p)) + 1);
  });
  assert.throws(() => die([0.5, 0.4], next), /sum to 1/);
});

test("k-RR refuses another option when its e^-ε coin fails, then keeps the true one", () => {
  // Proposal 2 ≠ truth 0; the e^-1 coin: A1 = Bernoulli(1) succeeds, A2 = Bernoulli(1/2)
  // fails on a 1, K = 2 is even, so proposal 2 is refused; proposal 0 is the truth.
  const params = { epsilon: 1, k: 3 };
  const refused = forced(2, 0, 1, 0);
  assert.deepEqual(sample("choice", "k_rr", params, 0, refused), { report: 0, coins: [2] });
});

/** The report as the server stores it: arm · 2 + answer for a design with arms. */
function stored({ report, arm }) {
  return arm === undefined ? report : arm * 2 + report;
}

function bin(report, bins) {
  return bins.findIndex(([low, high]) => (low === null || report >= low) && (high === null || report <= high));
}

for (const c of vectors.cases) {
  const label = `${c.kind}/${c.name} ${JSON.stringify(c.params)}`;
  test(`${label}: ${c.draws} draws per true value match the design's law`, () => {
    const next = cryptoSource();
    const observed = c.truths.map((truth) => {
      const counts = new Array(c.bins.length).fill(0);
      for (let i = 0; i < c.draws; i++) counts[bin(stored(sample(c.kind, c.name, c.params, truth, next)), c.bins)]++;
      return counts;
    });
    c.truths.forEach((truth, t) => {
      let chi2 = 0;
      c.bins.forEach((_, b) => {
        const p = c.probabilities[t][b];
        const expected = c.draws * p;
        const bound = vectors.z_limit * Math.sqrt(expected * (1 - p)) + 1;
        assert.ok(Math.abs(observed[t][b] - expected) <= bound, `${label}, truth ${truth}, bin ${b}`);
        if (p > 0) chi2 += (observed[t][b] - expected) ** 2 / expected;
        else assert.equal(observed[t][b], 0, `${label}: an impossible report appeared`);
      });
      assert.ok(chi2 <= c.chi2_limit, `${label}, truth ${truth}: chi-square ${chi2}`);
    });
    // The empirical ε: the largest log-ratio of report frequencies between true values,
    // over bins every true value produces often, against the design's ε.
    if (c.epsilon === null) {
      const revealing = c.bins.some((_, b) => {
        const column = observed.map((row) => row[b]);
        return Math.min(...column) === 0 && Math.max(...column) > 0;
      });
      assert.ok(revealing, `${label}: ε = ∞ means some report reveals the truth`);
      return;
    }
    let worst = 0;
    let tolerance = 0;
    const pooled = c.kind === "number" ? [poolBelow(observed, c)] : c.bins.map((_, b) => observed.map((row) => row[b]));
    for (const column of pooled) {
      const hi = Math.max(...column);
      const lo = Math.min(...column);
      if (lo < 1000) continue;
      worst = Math.max(worst, Math.log(hi / lo));
      tolerance = Math.max(tolerance, vectors.z_limit * Math.sqrt(1 / hi + 1 / lo));
    }
    assert.ok(Math.abs(worst - c.epsilon) <= tolerance, `${label}: empirical ε ${worst} vs ${c.epsilon}`);
  });
}

/** Reports at or below the lower bound, per true value: their ratio between the lowest
 * and the highest true value is exactly α^-(upper − lower) = e^ε. */
function poolBelow(observed, c) {
  const lower = c.params.lower;
  return [observed[0], observed[observed.length - 1]].map((row) =>
    row.reduce((acc, count, b) => acc + (c.bins[b][1] !== null && c.bins[b][1] <= lower ? count : 0), 0),
  );
}

test("the browser checks parameters against the server's declaration", () => {
  const byKey = Object.fromEntries(vectors.declarations.map((d) => [`${d.kind}/${d.name}`, d]));
  for (const c of vectors.cases) {
    assert.deepEqual(checkParams(byKey[`${c.kind}/${c.name}`], c.params), [], `${c.kind}/${c.name}`);
  }
  assert.match(checkParams(byKey["binary/forced_response"], { p_truth: 1.5, p_yes: 0.5 })[0], /p_truth must be ≤ 1/);
  assert.match(checkParams(byKey["binary/forced_response"], { p_truth: "0.5", p_yes: 0.5 })[0], /finite number/);
  assert.match(checkParams(byKey["choice/k_rr"], { epsilon: 0 })[0], /epsilon must be ≥ 0.01/);
  assert.match(checkParams(byKey["choice/k_rr"], { epsilon: 800 })[0], /epsilon must be ≤ 20/);
  assert.match(checkParams(byKey["choice/forced_response"], { p_truth: 0.5, p_forced: [0.5, 0.6] })[0], /sum to 1/);
  assert.match(checkParams(byKey["number/laplace"], { epsilon: 1, lower: 0.5, upper: 3 })[0], /whole number/);
});

test("the one-bit sampler has Duchi et al.'s law P(1 | x) = c + t·(x − lower)/(upper − lower)", () => {
  const epsilon = 1;
  const t = Math.tanh(epsilon / 2);
  const c = (1 - t) / 2;
  const draws = 8000;
  for (const x of [0, 3, 10, 14]) {
    let ones = 0;
    for (let i = 0; i < draws; i++) ones += sample("number", "one_bit", { epsilon, lower: 0, upper: 10 }, x).report;
    const u = Math.min(10, x) / 10;
    const want = c + t * u;
    // 5 standard errors: never flakes, still catches a wrong law.
    assert.ok(Math.abs(ones / draws - want) < 5 * Math.sqrt(want * (1 - want) / draws), `x = ${x}: ${ones / draws} vs ${want}`);
  }
  assert.throws(() => sample("number", "one_bit", { epsilon, lower: 0, upper: 10 }, 2.5), /whole number/);
});

test("shuffle draws each position without bias and leaves its input alone", () => {
  const items = ["a", "b", "c"];
  // Fisher–Yates: position 2 from 3 (word 1 → "b"), then position 1 from 2 (word 0 → "a").
  assert.deepEqual(shuffle(items, forced(1, 0)), ["c", "a", "b"]);
  assert.deepEqual(items, ["a", "b", "c"]);
  // A word in the biased top of the range is rejected, never folded by a modulo.
  const limit = Math.floor(2 ** 32 / 3) * 3;
  assert.deepEqual(shuffle(items, forced(limit, 0, 1)), ["c", "b", "a"]);
  const counts = new Map();
  const next = cryptoSource();
  for (let i = 0; i < 6000; i++) {
    const key = shuffle(items, next).join("");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  assert.equal(counts.size, 6);
  // Each order 1000 ± 6 standard deviations (about 6 × 29): p < 1e-8, never flaky.
  for (const n of counts.values()) assert.ok(Math.abs(n - 1000) < 180, `${n}`);
});

test("a split ballot draws 'direct' with its share, from the crypto words alone", () => {
  // 0.25 = 1/4: one uniform draw below 4; 0 is direct, 1–3 randomized.
  assert.equal(drawBallot(0.25, forced(0)), 1);
  assert.equal(drawBallot(0.25, forced(1)), 0);
  assert.equal(drawBallot(0.25, forced(3)), 0);
  for (const bad of [0, 1, -0.1, 1.5, Number.NaN, "0.5"]) assert.throws(() => drawBallot(bad, forced(0)), RangeError);
  const next = cryptoSource();
  let direct = 0;
  for (let i = 0; i < 20000; i++) direct += drawBallot(0.2, next);
  assert.ok(Math.abs(direct / 20000 - 0.2) < 0.015, `direct share ${direct / 20000}`);
});

test("on the direct ballot the answer is sent as given, with no coins", () => {
  const params = { p_truth: 0.5, p_yes: 0.5 };
  assert.deepEqual(sampleOnBallot(1, "binary", "forced_response", params, 1, forced()), { report: 1, arm: 1, coins: [] });
  assert.deepEqual(sampleOnBallot(1, "binary", "forced_response", params, 0, forced()), { report: 0, arm: 1, coins: [] });
  // The randomized ballot flips the design's coins: here the first coin says "answer truthfully".
  const randomized = sampleOnBallot(0, "binary", "forced_response", params, 0, forced(0, 1));
  assert.equal(randomized.arm, 0);
  assert.deepEqual(randomized, { ...sample("binary", "forced_response", params, 0, forced(0, 1)), arm: 0 });
});
