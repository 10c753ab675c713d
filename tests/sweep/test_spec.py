import json
import textwrap

import pytest

from afltheory.sweep import SpecError, Store, load_spec, parse_spec, run_sweep
from afltheory.sweep.spec import derive_seed, find_line, task_id


def test_tiny_expands_to_grid_times_seeds(tiny_text):
    spec = parse_spec(tiny_text)
    assert len(spec.tasks) == 2 * 3 * 2
    assert len({t.id for t in spec.tasks}) == 12
    assert len({t.point_id for t in spec.tasks}) == 6
    for t in spec.tasks:
        assert t.id == task_id(t.config) and t.seed == derive_seed(t.id)
        assert json.loads(t.config_json) == t.config


def test_ids_do_not_depend_on_layout(tiny_text):
    """Reordered axes/values, comments and whitespace change neither the ids nor the seeds."""
    a = parse_spec(tiny_text)
    b_text = tiny_text.replace(
        '"algorithm.eta_L" = [0.02, 0.1, 0.5]', "# comment\nalgorithm.eta_L = [0.5, 0.02, 0.1]"
    )
    b_text = b_text.replace('"algorithm.name" = ["AFACD", "AFACS"]', "")
    b_text += '"algorithm.name" = ["AFACS", "AFACD"]\n'
    b = parse_spec(b_text)
    assert {(t.id, t.seed) for t in a.tasks} == {(t.id, t.seed) for t in b.tasks}
    assert a.ids != b.ids  # order differs, content does not


def test_blocks_add_tasks_with_distinct_seeds(tiny_text):
    spec = parse_spec("blocks = 3\n" + tiny_text)
    assert len(spec.tasks) == 36
    assert len({t.seed for t in spec.tasks}) == 36


BAD = [
    # (edit to the tiny spec, expected key, expected line (1-based) of that key, fragment of the message)
    (lambda s: s.replace("rounds = 20", "rounds = 20\nroundz = 5"), "roundz", 3, "unknown key"),
    (lambda s: s.replace("rounds = 20", 'rounds = "20"'), "rounds", 2, "must be integer"),
    (lambda s: s.replace("rounds = 20", "rounds = 0"), "rounds", 2, ">= 1"),
    (lambda s: s.replace("seeds = [0, 1]", "seeds = []"), "seeds", 4, "empty"),
    (lambda s: s.replace("seeds = [0, 1]", 'seeds = [0, "x"]'), "seeds", 4, "integers"),
    (
        lambda s: s.replace('"algorithm.eta_L" = [0.02, 0.1, 0.5]', '"algorithm.eta_L" = []'),
        "grid.algorithm.eta_L",
        35,
        "empty",
    ),
    (
        lambda s: s.replace('"algorithm.eta_L" = [0.02, 0.1, 0.5]', '"algorithm.eta_L" = 0.1'),
        "grid.algorithm.eta_L",
        35,
        "array",
    ),
    (
        lambda s: s.replace('name = "AFACD"\n', 'name = "AFA_CD"\n').replace(
            '"algorithm.name" = ["AFACD", "AFACS"]', ""
        ),
        "algorithm.name",
        29,
        "AFACS",
    ),
    (
        lambda s: s.replace('"algorithm.name" = ["AFACD", "AFACS"]', '"algorithm.name" = ["AFACD", "Adam"]'),
        "grid.algorithm.name",
        34,
        "unknown name 'Adam'",
    ),
    (
        lambda s: s.replace("eta_L = 0.05", "eta_L = 0.05\nbeta = 0.9"),
        "algorithm.beta",
        32,
        "unknown parameter",
    ),
    (lambda s: s.replace("eta = 1.0", 'eta = "fast"'), "algorithm.eta", 30, "must be float"),
    (
        lambda s: s.replace('kind = "UniformDelay"', 'kind = "UniformDelays"'),
        "behaviour.delays.kind",
        21,
        "UniformDelay",
    ),
    (lambda s: s.replace("max_delay = 2", "max_delay = -1"), "behaviour.delays.max_delay", 22, "max_delay"),
    (lambda s: s.replace("m = 3", "m = 7"), "behaviour.arrivals.m", 18, "num_workers"),
    (lambda s: s.replace("[behaviour.arrivals]", "[behavior.arrivals]"), "behavior", 16, "unknown key"),
    (
        lambda s: s.replace('family = "HeterogeneousQuadratic"', 'family = "Problem()"'),
        "problem.family",
        8,
        "unknown name",
    ),
    (
        lambda s: s.replace('"algorithm.name"', '"algorithm.nme"'),
        "grid.algorithm.nme",
        34,
        "unknown parameter",
    ),
    (lambda s: s.replace('"algorithm.name"', '"seeds"'), "grid.seeds", 34, "top-level"),
    (lambda s: s + "\n[grid.problem]\n", "grid.problem", 37, "empty table"),
]


@pytest.mark.parametrize("edit,key,line,fragment", BAD)
def test_malformed_specs_fail_before_any_task_runs(tmp_path, tiny_text, edit, key, line, fragment):
    text = edit(tiny_text)
    spec_file = tmp_path / "bad.toml"
    spec_file.write_text(text)
    store = tmp_path / "s.sqlite"
    with pytest.raises(SpecError) as ei:
        run_sweep(spec_file, store)
    err = ei.value
    assert err.key == key, str(err)
    assert err.line == line, str(err)
    assert (
        text.splitlines()[line - 1]
        .strip()
        .startswith(
            ("[", key.split(".")[-1], f'"{key.split(".", 1)[-1]}', key.split(".")[-2] if "." in key else key)
        )
    ), text
    assert fragment in str(err)
    assert f"line {line}" in str(err) and key in str(err)
    assert not store.exists()  # nothing ran, no store was even created


def test_unknown_name_lists_allowed(tiny_text):
    with pytest.raises(SpecError) as ei:
        parse_spec(tiny_text.replace('"AFACD", "AFACS"]', '"AFACD", "Adam"]'))
    for n in ("AFACD", "AFACS", "FedAvg", "FedBuff", "AsySG"):
        assert n in str(ei.value)


def test_spec_never_executes_code(tmp_path, tiny_text):
    """Names are looked up in the modules' __all__ only: module attributes, builtins and expressions fail."""
    marker = tmp_path / "pwned"
    for evil in (
        f"__import__('os').system('touch {marker}')",
        "np",
        "check_positive",
        "os",
        "SGD.__init__",
        "__builtins__",
    ):
        with pytest.raises(SpecError):
            parse_spec(tiny_text.replace('"AFACD", "AFACS"]', f'"AFACD", "{evil}"]'))
    assert not marker.exists()


def test_invalid_toml_reports_line(tiny_text):
    with pytest.raises(SpecError) as ei:
        parse_spec(tiny_text.replace("dim = 3", "dim = = 3"))
    assert ei.value.line == 9


def test_nested_component_tables(tiny_text):
    """A nested table with `kind` builds an object from the parent's module (here a worker rule)."""
    text = tiny_text.replace("eta_L = 0.05", 'eta_L = 0.05\nworker = {kind = "FedProx", mu = 0.1}')
    spec = parse_spec(text)
    assert spec.tasks[0].config["algorithm"]["worker"] == {"kind": "FedProx", "mu": 0.1}
    with pytest.raises(SpecError) as ei:
        parse_spec(text.replace('"FedProx"', '"FedProxx"'))
    assert ei.value.key == "algorithm.worker.kind" and ei.value.line == 32


def test_find_line_variants():
    text = textwrap.dedent("""\
        a = 1
        [x.y]
        z = 2
        [grid]
        "x.y.z" = [1]
        w.v = [2]
        """)
    assert find_line(text, "a") == 1
    assert find_line(text, "x.y.z") == 3
    assert find_line(text, "x.y.q") == 2
    assert find_line(text, "grid.x.y.z") == 5
    assert find_line(text, "grid.w.v") == 6


def test_example_specs_validate():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2] / "experiments"
    specs = sorted(root.glob("*.toml"))
    assert any(p.name == "smoke.toml" for p in specs)
    for p in specs:
        spec = load_spec(p)
        assert spec.tasks, p


def test_load_spec_missing_file(tmp_path):
    with pytest.raises(SpecError):
        load_spec(tmp_path / "nope.toml")


def test_store_untouched_by_bad_spec_on_resume(tmp_path, tiny_text):
    """A malformed spec against an existing store changes nothing in it."""
    store = tmp_path / "s.sqlite"
    good = parse_spec(tiny_text.replace("[0.02, 0.1, 0.5]", "[0.1]").replace("seeds = [0, 1]", "seeds = [0]"))
    run_sweep(good, store)
    with Store(store, readonly=True) as st:
        before = st.fingerprint()
    with pytest.raises(SpecError):
        run_sweep(tiny_text.replace("rounds = 20", "rounds = -3"), store)
    with Store(store, readonly=True) as st:
        assert st.fingerprint() == before
