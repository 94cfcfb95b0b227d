"""Sizing: Wilson's interval and the smallest difference McNemar's test detects with 80% power
(Connor 1987), checked against values worked by hand, and `vidbench audit --plan N`."""

from __future__ import annotations

import math

import pytest

from custom_support import vidbench
from vidbench.audit.sizing import detectable_difference, mcnemar_n, sizing, wilson


def test_connor_formula_by_hand() -> None:
    # psi 0.3, d 0.05: (1.959964 sqrt(0.3) + 0.841621 sqrt(0.2975))^2 / 0.0025
    by_hand = (1.959964 * math.sqrt(0.3) + 0.841621 * math.sqrt(0.2975)) ** 2 / 0.0025
    assert mcnemar_n(0.05, 0.3) == pytest.approx(by_hand, rel=1e-6)
    assert by_hand == pytest.approx(939.6, abs=0.1)


def test_detectable_difference_inverts_the_formula() -> None:
    d = detectable_difference(1000, 0.42)
    assert d is not None and mcnemar_n(d, 0.42) == pytest.approx(1000, rel=1e-6)
    assert 0.05 < d < 0.06
    assert detectable_difference(5, 0.1) is None  # too few items for any difference
    for n, psi in ((10**12, 0.42), (10**8, 1e-5)):  # roots below 1e-6
        d = detectable_difference(n, psi)
        assert d is not None and mcnemar_n(d, psi) == pytest.approx(n, rel=1e-6)


def test_wilson_interval() -> None:
    z, p, n = 1.959964, 0.7, 1000  # Wilson's interval written out
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    low, high = wilson(n, p)
    assert low == pytest.approx(centre - half, abs=1e-6) and high == pytest.approx(
        centre + half, abs=1e-6
    )
    assert round(low, 4) == 0.6709 and round(high, 4) == 0.7276
    assert sizing(1000, 0.7).discordance == pytest.approx(0.42)


def test_plan_prints_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    assert vidbench("audit", "--plan", "1000", "--accuracy", "0.7") == 0
    said = capsys.readouterr().out
    assert "[67.1, 72.8]" in said and "42.0% of items (independent errors)" in said
    assert f"{100 * detectable_difference(1000, 0.42):.1f} points" in said
    assert vidbench("audit", "--plan", "1000", "--discordance", "0.2") == 0
    assert f"{100 * detectable_difference(1000, 0.2):.1f} points" in capsys.readouterr().out


def test_plan_says_why_no_difference_shows(capsys: pytest.CaptureFixture[str]) -> None:
    # at 100% accuracy two models never disagree: not a matter of too few items
    assert vidbench("audit", "--plan", "100", "--accuracy", "1") == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "no difference (the models never disagree)" in said and "too few" not in said
    assert vidbench("audit", "--plan", "5", "--discordance", "0.1") == 0
    assert "no difference (too few items)" in " ".join(capsys.readouterr().out.split())
    # a difference under 0.05 points is not printed as 0.0 points
    assert vidbench("audit", "--plan", str(10**12)) == 0
    d = detectable_difference(10**12, 0.42)
    said = " ".join(capsys.readouterr().out.split())
    assert d is not None and f"{100 * d:.2g} points" in said and "0.0 points" not in said
    with pytest.raises(SystemExit):  # past what the interval counts: argparse refuses it
        vidbench("audit", "--plan", str(10**12 + 1))
    assert "whole number in 1..1000000000000" in capsys.readouterr().err


def test_plan_refuses_a_disagreement_the_accuracy_rules_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # at 70% two models disagree on at most 60% of the items (30% each way)
    assert vidbench("audit", "--plan", "100", "--accuracy", "0.7", "--discordance", "1") == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "--discordance 1 cannot be" in said and "at most 0.6 of the items" in said
    assert vidbench("audit", "--plan", "100", "--accuracy", "0.7", "--discordance", "0.6") == 0
