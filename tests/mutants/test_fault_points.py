"""The engine fault points are one enum (``afltheory._faults.FaultPoint``): every engine site names a member,
every member is consulted by an engine and set by a catalogued mutant, and an unknown point is refused."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from afltheory import _faults, mutants
from afltheory._faults import FaultPoint
from afltheory.mutants import Mutant

ROOT = Path(__file__).resolve().parents[2] / "afltheory"


def _engine_sites() -> list[tuple[str, int, ast.expr]]:
    sites = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "_faults.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            f = getattr(node, "func", None)
            if (
                isinstance(node, ast.Call)
                and isinstance(f, ast.Attribute)
                and f.attr == "get"
                and isinstance(f.value, ast.Name)
                and f.value.id == "_faults"
            ):
                sites.append((str(path.relative_to(ROOT)), node.lineno, node.args[0]))
    return sites


def test_every_engine_site_names_a_member():
    sites = _engine_sites()
    assert sites
    bad = [
        (f, line)
        for f, line, arg in sites
        if not (isinstance(arg, ast.Attribute) and arg.attr in FaultPoint.__members__)
    ]
    assert not bad, f"fault points given as strings (use _faults.FaultPoint.<MEMBER>): {bad}"


def test_every_member_is_consulted_and_catalogued():
    consulted = {arg.attr for _, _, arg in _engine_sites() if isinstance(arg, ast.Attribute)}
    assert consulted == set(FaultPoint.__members__)
    catalogued = {p for m in mutants.CATALOGUE.values() for p in m.faults}
    assert catalogued == {p.value for p in FaultPoint}


def test_members_are_their_dotted_names_and_unknown_points_are_refused():
    assert FaultPoint.SIM_NOISE == "sim.noise" and FaultPoint.of("sim.noise") is FaultPoint.SIM_NOISE
    assert _faults.get(FaultPoint.SIM_NOISE) is None and _faults.get("sim.noise", 3) == 3
    with pytest.raises(ValueError, match="not a fault point"):
        _faults.get("sim.nosie")
    with pytest.raises(ValueError, match="not a fault point"):
        Mutant("x", "noise (simulator)", "typo", faults={"sim.nosie": 1})


def test_a_member_and_its_name_reach_the_same_fault():
    with mutants.injected("exact.round_late"):
        assert _faults.get(FaultPoint.EXACT_ROUND_SHIFT, 0) == 1 == _faults.get("exact.round_shift", 0)
    with mutants.probe() as seen:
        _faults.get(FaultPoint.SIM_NOISE)
    assert seen == {"sim.noise"} and mutants.get("sim.noise_dropped").exercised_by(seen)
