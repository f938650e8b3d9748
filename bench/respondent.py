"""The respondent side in real Chromium: page weight and the browser sampler's accuracy.

Run: ``.venv/bin/python bench/respondent.py [--draws 1000000]`` (about a minute). It
collects static files into a temporary directory, migrates a temporary SQLite database,
serves the app with WhiteNoise (hashed, compressed files, as in production) on a local
port, and drives Debian's Chromium with Playwright:

1. page weight of a respondent page with 10 questions mixing yes/no, crosswise, multiple
   choice and numbers, with a consent text, "Prefer not to answer", a condition and a
   second language (the language choice on the page), from
   the browser's resource timing (bytes on the wire, compressed), and every host contacted;
2. the served ``rr.js`` sampler run ``--draws`` times per design and true value inside
   the page (every kind and design): report frequencies against the design's response
   matrix or noise law (chi-square, and every cell by a binomial test) and the empirical
   ε (largest log likelihood ratio) against the claimed ε. The browser test
   ``tests/browser/test_respondent_kinds.py`` runs the same check at 10⁵ draws.

Targets (SPEC §6): ≤ 50 KB compressed, no third-party host; p > 1e-6 and empirical ε
within its interval of the claimed ε.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM, LAUNCH_ARGS  # noqa: E402  (one launch recipe)

LN3 = math.log(3)
# (kind, design, parameters as rr.js takes them: a choice design's with k): every design a
# respondent can meet, each drawn at every true value (a number's at its bounds and middle).
CASES = [
    ("binary", "forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
    ("binary", "forced_response", {"p_truth": 0.75, "p_yes": 1 / 3}),
    ("binary", "mirrored", {"p": 0.75}),
    ("binary", "unrelated_question", {"p_truth": 0.5, "pi": 0.0833}),
    ("binary", "crosswise", {"p": 0.25}),
    ("binary", "direct", {}),
    ("choice", "k_rr", {"epsilon": LN3, "k": 3}),
    ("choice", "k_rr", {"epsilon": 1.0, "k": 5}),
    ("choice", "forced_response", {"p_truth": 0.5, "p_forced": [0.5, 0.25, 0.25], "k": 3}),
    ("choice", "direct", {"k": 4}),
    ("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 10}),
    ("number", "laplace", {"epsilon": LN3, "lower": -3, "upper": 3}),
    ("number", "direct", {"lower": 0, "upper": 10}),
    ("number", "one_bit", {"epsilon": 1.0, "lower": 0, "upper": 10}),
]
# A whole page of 10 questions mixing the kinds, for the page weight.
PAGE = [
    ("binary", "forced_response", {"p_truth": 0.5, "p_yes": 0.5}, []),
    ("binary", "crosswise", {"p": 0.25}, []),
    ("binary", "mirrored", {"p": 0.75}, []),
    ("choice", "k_rr", {"epsilon": LN3}, ["Never", "Once or twice", "Often"]),
    ("choice", "forced_response", {"p_truth": 0.5, "p_forced": [0.5, 0.25, 0.25]}, list("ABC")),
    ("choice", "k_rr", {"epsilon": 2.0}, ["Mon", "Tue", "Wed", "Thu", "Fri"]),
    ("number", "laplace", {"epsilon": 1.0, "lower": 0, "upper": 20}, []),
    ("number", "laplace", {"epsilon": 2.0, "lower": 0, "upper": 12}, []),
    ("choice", "direct", {}, ["First", "Second", "Third or later"]),
    ("number", "direct", {"lower": 16, "upper": 99}, []),
]
# A consent text as an ethics board would ask for it (skips are on: the default).
CONSENT = (
    "This study is run by the Department of Sociology. Taking part is voluntary: you may "
    "stop at any time, and you may skip any question. Your answers are randomized on your "
    "device before they are sent, so no single answer says anything certain about you. "
    "The data are kept for five years and used only for research. Questions: "
    "ethics@example.org."
)
DRAW_IN_PAGE = """async ({cases, n}) => {
    const rr = await import("/static/survey/rr.js");
    const next = rr.cryptoSource();
    return cases.map(([kind, name, params, truths]) => {
        const start = performance.now();
        const counts = truths.map((truth) => {
            const tally = new Map();
            for (let i = 0; i < n; i++) {
                const r = rr.sample(kind, name, params, truth, next).report;
                tally.set(r, (tally.get(r) || 0) + 1);
            }
            return [...tally];
        });
        return [counts, performance.now() - start];
    });
}"""


def design_of(kind: str, name: str, params: dict):
    from estimator.designs import make_design

    params = dict(params)
    k = params.pop("k", None)
    return make_design(kind, name, params, k=k)


def truths_of(design) -> list[int]:
    if design.kind == "number":
        return [design.lower, (design.lower + design.upper) // 2, design.upper]
    return list(design.true_values)


def law(design, truth: int, reports: range) -> dict[int, float]:
    """P(report | truth) for each report: the response matrix's column, or the noise law
    around the (clipped) true number, or the design's likelihood (one bit)."""
    if design.output_description()["type"] == "integers":
        import numpy as np

        z = np.array(reports) - min(max(truth, design.lower), design.upper)
        return dict(zip(reports, design.noise_pmf(z).tolist(), strict=True))
    column = design.true_values.index(truth)
    return {r: float(design.likelihood(r)[column]) for r in reports}


def draw(page, n: int, cases=CASES) -> list[tuple]:
    """n reports per case and true value, drawn by the served rr.js inside the page in one
    call: [(design, truths, [{report: count} per truth], milliseconds)]."""
    designs = [design_of(*case) for case in cases]
    payload = [[*case, truths_of(d)] for case, d in zip(cases, designs, strict=True)]
    results = page.evaluate(DRAW_IN_PAGE, {"cases": payload, "n": n})
    return [
        (design, truths_of(design), [dict(c) for c in counts], ms)
        for design, (counts, ms) in zip(designs, results, strict=True)
    ]


def reports_of(design) -> range:
    out = design.output_description()
    if out["type"] == "integers":
        return range(out["min_report"], out["max_report"] + 1)
    return range(len(out["values"]))


def check(design, truths, counts, n: int, alpha: float = 1e-6) -> dict:
    """Frequencies against the design (chi-square per true value, every cell by a binomial
    test with Bonferroni over the cells, impossible reports never seen) and the empirical
    ε: the log ratio of an event's frequencies under two true values, against the design's
    (each event: one report, or for numbers all reports beyond a bound)."""
    from scipy import stats

    reports = reports_of(design)
    laws = [law(design, t, reports) for t in truths]
    problems, p_values = [], []
    for truth, seen, expected in zip(truths, counts, laws, strict=True):
        if extra := set(seen) - {r for r, p in expected.items() if p > 0}:
            problems.append(f"truth {truth}: impossible reports {sorted(extra)[:5]}")
        bins = [r for r, p in expected.items() if p * n >= 20]
        rest = 1 - sum(expected[r] for r in bins)
        observed = [seen.get(r, 0) for r in bins] + [n - sum(seen.get(r, 0) for r in bins)]
        wanted = [expected[r] * n for r in bins] + [rest * n]
        if rest * n < 5:  # fold a tiny remainder into the last cell
            observed[-2:] = [sum(observed[-2:])]
            wanted[-2:] = [sum(wanted[-2:])]
        if len(wanted) > 1:
            p_values.append(stats.chisquare(observed, wanted).pvalue)
        cells = [(o, w / n) for o, w in zip(observed, wanted, strict=True) if 0 < w < n]
        for o, p in cells:
            p_values.append(stats.binomtest(o, n, min(p, 1.0)).pvalue * len(cells))
    worst = min(p_values, default=1.0)
    if worst < alpha:
        problems.append(f"frequencies off the design: p = {worst:.3g}")
    eps_seen, eps_se = _empirical_epsilon(design, truths, counts, laws, n, problems)
    return {"p": worst, "epsilon": eps_seen, "epsilon_se": eps_se, "problems": problems}


def _events(design, reports) -> list[set[int]]:
    if design.output_description()["type"] == "integers":
        return [
            {r for r in reports if r >= design.upper},
            {r for r in reports if r <= design.lower},
        ]
    return [{r} for r in reports]


def _empirical_epsilon(design, truths, counts, laws, n, problems) -> tuple[float, float]:
    """The largest log likelihood ratio seen, with its standard error (delta method), each
    ratio checked against the design's within z standard errors (p < 1e-6 over all of
    them together, Bonferroni)."""
    from scipy import stats

    if not design.is_private:
        return math.inf, 0.0
    ratios = []
    for event in _events(design, reports_of(design)):
        for i, j in ((i, j) for i in range(len(truths)) for j in range(len(truths)) if i != j):
            top = sum(counts[i].get(r, 0) for r in event)
            bottom = sum(counts[j].get(r, 0) for r in event)
            if min(top, bottom) < 100:
                continue  # too rare to say anything at this n
            want = math.log(sum(laws[i][r] for r in event) / sum(laws[j][r] for r in event))
            se = math.sqrt(1 / top - 1 / n + 1 / bottom - 1 / n)
            ratios.append((math.log(top / bottom), se, want))
    z = stats.norm.isf(1e-6 / 2 / max(len(ratios), 1))
    for seen, se, want in ratios:
        if abs(seen - want) > z * se:
            problems.append(f"log ratio {seen:.4f} ± {se:.4f}, design {want:.4f}")
    return max(((seen, se) for seen, se, _ in ratios), default=(-math.inf, 0.0))


def label_of(design) -> str:
    params = design.params() | ({"k": design.k} if design.kind == "choice" else {})
    shown = " ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
    )
    return f"{design.kind}/{design.name} {shown}"


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


class ThreadedServer(WSGIServer):
    daemon_threads = True

    def process_request(self, request, client_address) -> None:
        threading.Thread(target=self._handle, args=(request, client_address), daemon=True).start()

    def _handle(self, request, client_address) -> None:
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


def set_up(workdir: Path) -> str:
    """A throw-away database and static root; returns the survey's path."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{workdir / 'bench.sqlite3'}",
        STATIC_ROOT=str(workdir / "static"),
        DEBUG="false",
        SECRET_KEY=os.environ.get("SECRET_KEY") or "bench-" + "k" * 50,
        ALLOWED_HOSTS="127.0.0.1",
    )
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    from survey.models import Survey

    owner = User.objects.create_user("bench")
    survey = Survey.objects.create(
        owner=owner,
        title="Bench",
        status=Survey.Status.OPEN,
        consent_text=CONSENT,
        languages=["de"],
        texts={"de": {"title": "Messung"}},
    )
    asked = []
    for i, (kind, name, params, options) in enumerate(PAGE):
        # The last question is shown only after the direct choice before it says 2nd or later.
        show_if = {"question": asked[-1].id, "in": [1, 2]} if i == len(PAGE) - 1 else None
        asked.append(
            survey.questions.create(
                show_if=show_if,
                position=i,
                text=f"Question {i + 1}: how often, honestly, did this happen last term?",
                kind=kind,
                design_name=name,
                design_params=params,
                options=options,
                texts={
                    "de": {
                        "text": f"Frage {i + 1}: wie oft ist das im letzten Semester "
                        "ehrlich gesagt passiert?",
                        "options": [o.upper() for o in options],
                    }
                },
            )
        )
    return survey.get_absolute_url()


def page_weight(page, url: str) -> None:
    encodings: dict[str, str] = {}
    page.on("response", lambda r: encodings.update({r.url: r.headers.get("content-encoding")}))
    page.goto(url)
    page.wait_for_load_state("networkidle")
    entries = page.evaluate(
        """() => [...performance.getEntriesByType("navigation"),
                  ...performance.getEntriesByType("resource")].map((e) => [
            e.name, e.transferSize, e.decodedBodySize])"""
    )
    print(f"{'resource':<42} {'encoding':>9} {'on the wire':>12} {'decoded':>9}")
    for name, transfer, decoded in entries:
        encoding = encodings.get(name) or "identity"
        print(f"{urlsplit(name).path[:42]:<42} {encoding:>9} {transfer:>12,} {decoded:>9,}")
    total = sum(e[1] for e in entries)
    hosts = {urlsplit(e[0]).netloc for e in entries}
    print(f"{'total':<42} {'':>9} {total:>12,} {sum(e[2] for e in entries):>9,}")
    verdict = "PASS" if total <= 50 * 1024 else "FAIL"
    print(f"budget 51,200 bytes: {verdict}; hosts contacted: {sorted(hosts)}\n")


def sampler(page, draws: int) -> None:
    print(
        f"{'design':<66} {'truths':>7} {'min p':>8} {'ε claimed':>9} {'ε observed (± 1 se)':>20}"
        f" {'draws/s':>9} verdict"
    )
    for design, truths, counts, ms in draw(page, draws):
        result = check(design, truths, counts, draws)
        claimed = "∞" if not design.is_private else f"{design.epsilon:.4f}"
        seen = (
            "—"
            if math.isinf(result["epsilon"])
            else f"{result['epsilon']:.4f} ± {result['epsilon_se']:.4f}"
        )
        rate = len(truths) * draws / ms * 1000
        verdict = "PASS" if not result["problems"] else "FAIL " + "; ".join(result["problems"])
        print(
            f"{label_of(design):<66} {len(truths):>7} {result['p']:>8.3g} {claimed:>9} {seen:>20}"
            f" {rate:>9,.0f} {verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        path = set_up(Path(tmp))
        from django.core.wsgi import get_wsgi_application

        server = make_server(
            "127.0.0.1", 0, get_wsgi_application(), ThreadedServer, handler_class=QuietHandler
        )
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 360, "height": 740})
            print(f"Respondent page weight (10 mixed questions, phone), {base}{path}\n")
            page_weight(page, base + path)
            print(f"Browser sampler, {args.draws:,} draws per design and true value\n")
            sampler(page, args.draws)
            browser.close()
        server.shutdown()


if __name__ == "__main__":
    main()
