"""Fit the trust model's weights (pipeline.support.SupportWeights) on labelled questions.

Input: the JSON `bench/quality.py --json FILE` writes (every question's trust signals and whether answering it
would rest on the right evidence). Only the questions not marked holdout are used. The label is 1 for a
question in scope whose expected page was in hand, 0 for one that should be refused or whose evidence was
wrong; the fit is an L2-regularised logistic regression (Newton steps), so the trust score is a calibrated
probability that the answer rests on the right evidence. Prints the weights and the in-sample log loss.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FEATURES = ("best", "held", "missing", "absent_name")
L2 = 0.5


def features(signals: dict[str, float]) -> list[float]:
    best = min(1 - 1e-4, max(1e-4, float(signals.get("best", 0.0))))
    return [1.0, math.log(best / (1 - best)), *(float(signals.get(name, 0.0)) for name in FEATURES[1:])]


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> np.ndarray:
    w = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = (x.T * (p * (1 - p))) @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="The file bench/quality.py --json wrote.")
    parser.add_argument("--questions", type=Path, default=REPO / "bench" / "data" / "quality" / "questions.jsonl")
    args = parser.parse_args()
    rows = json.loads(args.results.read_text())["results"]
    holdout = {json.loads(line)["question"]: bool(json.loads(line).get("holdout"))
               for line in args.questions.read_text().splitlines() if line.strip()}
    tuning = [r for r in rows if not holdout.get(r["question"], False) and r["signals"]]
    x = np.array([features(r["signals"]) for r in tuning])
    y = np.array([1.0 if r["grounded"] else 0.0 for r in tuning])
    w = fit(x, y)
    p = np.clip(1 / (1 + np.exp(-(x @ w))), 1e-6, 1 - 1e-6)
    loss = float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    names = ("bias", "best", "coverage", "absent", "name")
    print(f"{len(tuning)} questions ({int(y.sum())} grounded); log loss {loss:.3f}")
    print("SupportWeights(" + ", ".join(f"{n}={v:.2f}" for n, v in zip(names, w, strict=True)) + ")")


if __name__ == "__main__":
    main()
