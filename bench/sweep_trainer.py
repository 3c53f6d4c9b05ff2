#!/usr/bin/env python3
"""A synthetic trainer whose learning curve is known: loss(step) = q(lr) + 1/(step+1),
q(lr) = (log10(lr) + 3)^2, so lr = 1e-3 is the best trial at every step and the ranking
of trials never changes over steps. Reports each step as a rota-metric line and sleeps
--step-s between steps (the work a real trainer would do). bench/run_sweep_asha.sh."""
import argparse
import math
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--steps", type=int, default=27)
    p.add_argument("--step-s", type=float, default=0.5)
    a = p.parse_args()
    if a.lr <= 0:
        print("--lr must be positive", file=sys.stderr)
        return 2
    q = (math.log10(a.lr) + 3) ** 2
    for step in range(1, a.steps + 1):
        time.sleep(a.step_s)
        print(f"rota-metric loss={q + 1 / (step + 1):.6f} step={step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
