"""benchmarks/bench_adaptive.py --coverage-only: the adaptive arm's MUP coverage at the stop and its diagnosis."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "benchmarks" / "bench_adaptive.py"


def run(*options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *options], capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_coverage_only_prints_the_diagnosis_and_its_last_line():
    done = run("--design", "seed", "--population", "30", "--topics", "10", "--studies", "3", "--coverage-only")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"truth_in_set_adaptive=([0-9.]+) coverage_mup_adaptive=([0-9.]+) coverage_se=([0-9.]+)", last)
    assert match, last
    assert 0 <= float(match.group(2)) <= 1
    assert "uniform:" not in done.stderr  # no uniform arm
    for part in ("adaptive at the stop: 3 studies; coverage of the score interval", "complete study: 3 studies", "effective df: quantiles"):
        assert part in done.stderr
    assert re.search(r"D#-nDCG@10 \(population MUP [0-9.]+\): bias [+-][0-9.]+, empirical SD", done.stderr)
    looks = re.search(r"stopped at look \(1-based\): \{(.*)\}", done.stderr)
    assert looks and sum(int(n) for n in re.findall(r": (\d+)", looks.group(1))) == 3
    # where the answers went up to the stop: every answer in exactly one of the bookkeeping's parts
    stopped = re.search(r"^adaptive: answers_to_decide .*, stopped at (\d+) answers", done.stderr, re.M)
    spent = re.search(r"^adaptive: answers up to the stop by what they were spent on \(mean per study\): (.*)$", done.stderr, re.M)
    assert stopped and spent, done.stderr
    parts = dict(re.findall(r"([a-z, ]+?) (\d+) \(\d+%\)(?:, |$)", spent.group(1)))
    assert list(parts) == ["disputed, first", "disputed, second phase", "undisputed drawn", "further answers", "not drawn"]
    assert int(parts["disputed, first"]) > 0
    assert abs(sum(int(v) for v in parts.values()) - int(stopped.group(1))) <= 3  # each part rounded to an answer


def test_bad_options_are_refused():
    done = run("--design", "seed", "--studies", "0", "--coverage-only")
    assert done.returncode == 2
    assert "--studies and --B must be >= 1" in done.stderr


def test_full_run_prints_the_saving_with_its_standard_error_and_the_issue_line():
    done = run("--design", "seed", "--population", "30", "--topics", "10", "--studies", "4")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    match = re.fullmatch(
        r"answers_to_decide_uniform=(\d+) answers_to_decide_adaptive=(\d+) saving=([0-9.]+) "
        r"truth_in_set_adaptive=([0-9.]+) coverage_mup_adaptive=([0-9.]+)",
        last,
    )
    assert match, last
    saving = float(match.group(3))
    assert abs(saving - int(match.group(1)) / int(match.group(2))) < 0.006  # the printed means are rounded
    error = re.search(r"saving ([0-9.]+), standard error ([0-9.]+) over 4 studies \(paired, delta method\)", done.stderr)
    assert error, done.stderr
    assert float(error.group(1)) == saving and float(error.group(2)) > 0
