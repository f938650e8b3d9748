"""The respondent side in real Chromium: page weight and the browser sampler's accuracy.

Run: ``.venv/bin/python bench/respondent.py [--draws 1000000]`` (about a minute). It
collects static files into a temporary directory, migrates a temporary SQLite database,
serves the app with WhiteNoise (hashed, compressed files, as in production) on a local
port, and drives Debian's Chromium with Playwright:

1. page weight of a three-question respondent page from the browser's resource timing
   (bytes on the wire, compressed), and every host contacted;
2. the served ``rr.js`` sampler run ``--draws`` times per design and true answer inside
   the page: report frequencies against the design (two-sided binomial test) and the
   empirical ε (largest log likelihood ratio) against the claimed ε.

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

DESIGNS = [
    ("forced_response", {"p_truth": 0.5, "p_yes": 0.5}),
    ("forced_response", {"p_truth": 0.75, "p_yes": 1 / 3}),
    ("mirrored", {"p": 0.75}),
    ("unrelated_question", {"p_truth": 0.5, "pi": 0.0833}),
]


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
    survey = Survey.objects.create(owner=owner, title="Bench", status=Survey.Status.OPEN)
    for i, (name, params) in enumerate(DESIGNS[:3]):
        survey.questions.create(
            position=i, text=f"Question {i + 1}?", design_name=name, design_params=params
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
    from scipy import stats

    from estimator.randomized_response import design_from_params

    results = page.evaluate(
        """async ({designs, n}) => {
            const rr = await import("/static/survey/rr.js");
            return designs.map(([name, params]) => {
                const start = performance.now();
                const counts = [0, 1].map((truth) => rr.countYes(name, params, truth, n));
                return [counts, performance.now() - start];
            });
        }""",
        {"designs": DESIGNS, "n": draws},
    )
    z = stats.norm.isf(1e-6 / 2)
    print(
        f"{'design':<42} {'x':>2} {'P(yes) expected':>16} {'observed':>9} {'p-value':>8}"
        f" {'ε claimed':>10} {'ε observed (±)':>15} {'draws/s':>11}"
    )
    for (name, params), (counts, ms) in zip(DESIGNS, results, strict=True):
        design = design_from_params(name, params)
        label = f"{name} " + " ".join(f"{k}={v:.4g}" for k, v in params.items())
        k0, k1 = counts
        log_ratios = [  # both likelihood ratios, with delta-method standard errors
            (math.log(k1 / k0), math.sqrt(1 / k1 + 1 / k0 - 2 / draws)),
            (
                math.log((draws - k0) / (draws - k1)),
                math.sqrt(1 / (draws - k0) + 1 / (draws - k1) - 2 / draws),
            ),
        ]
        eps, se = max(log_ratios)
        for truth, k, expected in ((0, k0, design.p_yes_given_0), (1, k1, design.p_yes_given_1)):
            p_value = stats.binomtest(k, draws, expected).pvalue
            tail = ""
            if truth:
                interval = f"{eps:.4f} ± {z * se:.4f}"
                rate = 2 * draws / ms * 1000
                tail = f" {design.epsilon:>10.4f} {interval:>15} {rate:>11,.0f}"
            row = f"{label:<42} {truth:>2} {expected:>16.5f} {k / draws:>9.5f} {p_value:>8.3g}"
            print(row + tail)


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
            print(f"Respondent page weight (3 questions, phone viewport), {base}{path}\n")
            page_weight(page, base + path)
            print(f"Browser sampler, {args.draws:,} draws per design and true answer x\n")
            sampler(page, args.draws)
            browser.close()
        server.shutdown()


if __name__ == "__main__":
    main()
