"""afltheory.checks.criteria and Verdict.judged: one criterion decides the claim and its control (all
deterministic)."""

import math

import pytest

from afltheory.checks import (
    AllOf,
    AtLeast,
    AtMost,
    Contains,
    ControlMeasurement,
    Criterion,
    Holds,
    Near,
    SlopeIn,
    Verdict,
)

GROWTH = AllOf(AtLeast(on="g", strict=True, limit=4.0), Holds(on="fails"))


@pytest.mark.parametrize(
    "criterion, measured, theoretical, stats, expected",
    [
        (AtMost(), 1.0, 1.0, {}, True),
        (AtMost(), 1.0 + 1e-12, 1.0, {}, False),
        (AtMost(tol=0.1), 1.05, 1.0, {}, True),
        (AtMost(on="ucb"), 0.5, 1.0, {"ucb": 1.2}, False),
        (AtMost(), math.inf, 1.0, {}, False),
        (AtLeast(), 2.0, 1.0, {}, True),
        (AtLeast(on="lcb"), 2.0, 1.0, {"lcb": 0.9}, False),
        (AtLeast(), 1.0, 1.0, {}, True),
        (AtLeast(strict=True), 1.0, 1.0, {}, False),
        (AtMost(strict=True), 1.0, 1.0, {}, False),
        (AtMost(limit=1e-4), 5e-5, 0.0, {}, True),
        (AtMost(limit=1e-4), 2e-4, 0.0, {}, False),
        (AtLeast(on="ci_high", strict=True, limit=-0.35), -0.5, -0.5, {"ci_high": -0.3}, True),
        (AtLeast(on="ci_high", strict=True, limit=-0.35), -0.5, -0.5, {"ci_high": -0.35}, False),
        (Near(tol=1e-6), 1.0 + 5e-7, 1.0, {}, True),
        (Near(tol=1e-6), 1.0 + 2e-6, 1.0, {}, False),
        (Near(rel=0.1), 2.15, 2.0, {}, True),
        (Near(rel=0.1), 2.25, 2.0, {}, False),
        (Near(z=3.0), 1.2, 1.0, {"se": 0.1}, True),
        (Near(z=3.0), 1.4, 1.0, {"se": 0.1}, False),
        (Contains(), 0.0, 0.5, {"ci": (0.4, 0.6)}, True),
        (Contains(), 0.0, 0.7, {"ci": (0.4, 0.6)}, False),
        (SlopeIn(tol=0.03), -0.6, -0.5, {"ci": (-0.56, -0.52)}, True),
        (SlopeIn(tol=0.01), -0.6, -0.5, {"ci": (-0.56, -0.52)}, False),
        (SlopeIn(tol=0.05), -0.47, -0.5, {}, True),
        (Holds(), "text", "text", {"holds": True}, True),
        (Holds(on="x"), "text", "text", {"x": 0}, False),
        (GROWTH, 0.0, 0.0, {"g": 5.0, "fails": True}, True),
        (GROWTH, 0.0, 0.0, {"g": 5.0, "fails": False}, False),
        (GROWTH, 0.0, 0.0, {"g": 3.0, "fails": True}, False),
    ],
)
def test_criteria_judge(criterion, measured, theoretical, stats, expected):
    assert isinstance(criterion, Criterion)
    assert criterion.judge(measured, theoretical, **stats) is expected
    assert isinstance(criterion.describe(), str) and criterion.describe()


def test_criteria_refuse_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        Near()
    with pytest.raises(ValueError, match="exactly one"):
        Near(tol=1.0, z=2.0)
    with pytest.raises(ValueError, match="tol"):
        AtMost(tol=-1.0)
    with pytest.raises(ValueError, match="not both"):
        AtLeast(tol=0.1, limit=1.0)
    with pytest.raises(ValueError, match="NaN"):
        AtMost().judge(float("nan"), 1.0)
    with pytest.raises(ValueError, match="ucb"):
        AtMost(on="ucb").judge(1.0, 1.0)
    with pytest.raises(ValueError, match="se"):
        Near(z=2.0).judge(1.0, 1.0)
    with pytest.raises(TypeError, match="real number"):
        AtMost().judge("abc", 1.0)
    with pytest.raises(TypeError, match="criteria"):
        AllOf()
    with pytest.raises(TypeError, match="criteria"):
        AllOf(lambda m, t: True)


def test_describe_uses_text():
    assert AtMost(on="ucb", text="max 99 % UCB ≤ 0.05").describe() == "max 99 % UCB ≤ 0.05"
    assert AtMost(tol=0.5).describe() == "measured ≤ theoretical + 0.5"


def test_judged_uses_one_criterion_for_claim_and_control():
    crit = AtMost(on="ucb")
    v = Verdict.judged(
        id="a.b",
        claim="c",
        reference="r",
        criterion=crit,
        measured=1.0,
        theoretical=2.0,
        stats={"ucb": 1.5},
        control=ControlMeasurement(
            description="bound without the term", measured=1.0, theoretical=1.2, stats={"ucb": 1.5}
        ),
    )
    assert v.passed and not v.negative_control.passed and v.ok
    assert v.relation == "<=" and v.tolerance == crit.describe()
    # a control that the same criterion accepts is reported as failing to fail
    w = Verdict.judged(
        id="a.b",
        claim="c",
        reference="r",
        criterion=crit,
        measured=1.0,
        theoretical=2.0,
        stats={"ucb": 1.5},
        control=ControlMeasurement(description="d", measured=1.0, theoretical=1.9, stats={"ucb": 1.5}),
    )
    assert w.passed and w.negative_control.passed and not w.ok
    assert Verdict.from_json(v.to_json()) == v


def test_judged_requires_gate_the_claim_only():
    v = Verdict.judged(
        id="a",
        claim="c",
        reference="r",
        criterion=AtMost(),
        measured=1.0,
        theoretical=2.0,
        requires={"power": False},
        control=ControlMeasurement(description="d", measured=1.0, theoretical=0.5),
    )
    assert not v.passed and not v.negative_control.passed


def test_judged_refuses_hand_set_decisions():
    with pytest.raises(TypeError, match="passed"):
        Verdict.judged(
            id="a", claim="c", reference="r", criterion=AtMost(), measured=1.0, theoretical=2.0, passed=True
        )
    with pytest.raises(TypeError, match="negative_control"):
        Verdict.judged(
            id="a",
            claim="c",
            reference="r",
            criterion=AtMost(),
            measured=1.0,
            theoretical=2.0,
            negative_control=None,
        )
    with pytest.raises(TypeError, match="criterion"):
        Verdict.judged(
            id="a", claim="c", reference="r", criterion=lambda m, t: True, measured=1.0, theoretical=2.0
        )
    with pytest.raises(TypeError, match="ControlMeasurement"):
        Verdict.judged(
            id="a",
            claim="c",
            reference="r",
            criterion=AtMost(),
            measured=1.0,
            theoretical=2.0,
            control=("d", 1.0, 2.0),
        )


def test_explicit_relation_and_tolerance_are_kept():
    v = Verdict.judged(
        id="a",
        claim="c",
        reference="r",
        criterion=AtMost(),
        measured=0.0,
        theoretical=0.05,
        relation="~=",
        tolerance="hand text",
    )
    assert v.relation == "~=" and v.tolerance == "hand text" and v.passed


def test_unless_confirmed_excuses_only_an_unconfirmed_failure():
    """``UnlessConfirmed``: the inner criterion passes → True; it fails → True only when the failure was
    tested and not confirmed (False); confirmed (True) or no confirmation (None/absent) → the inner
    verdict."""
    from afltheory.checks import AtMost, UnlessConfirmed

    c = UnlessConfirmed(AtMost(), text="ratio ≤ 1 unless MC confirms")
    assert c.judge(0.5, 1.0, confirmed=True) and c.judge(0.5, 1.0)
    assert c.judge(2.0, 1.0, confirmed=False)
    assert not c.judge(2.0, 1.0, confirmed=True)
    assert not c.judge(2.0, 1.0, confirmed=None) and not c.judge(2.0, 1.0)
    assert c.describe() == "ratio ≤ 1 unless MC confirms" and c.relation == "<="
    assert "a failure counts only if confirmed" in UnlessConfirmed(AtMost()).describe()
    with pytest.raises(TypeError, match="confirmed"):
        c.judge(2.0, 1.0, confirmed="yes")
    with pytest.raises(TypeError, match="criterion"):
        UnlessConfirmed(1.0)
