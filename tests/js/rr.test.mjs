// Unit tests for the browser sampler, run with node's built-in test runner
// (`node --test tests/js/`; pytest runs them through tests/js/test_node_unit_tests.py).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  bernoulli,
  countYes,
  cryptoSource,
  randomize,
  toFraction,
  uniformBelow,
  uuid4,
} from "../../static/survey/rr.js";

const source = readFileSync(new URL("../../static/survey/rr.js", import.meta.url), "utf8");

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
