import csv
import json

from afltheory.sweep.cli import main


def test_cli_run_status_export_plot(tmp_path, tiny_path, capsys):
    store = tmp_path / "s.sqlite"
    assert main(["run", str(tiny_path), "--store", str(store), "--jobs", "2", "--progress", "lines"]) == 0
    err = capsys.readouterr().err
    assert "[12/12]" in err and "12 ran, 0 already stored" in err
    assert main(["sweep", "run", str(tiny_path), "--store", str(store)]) == 0
    assert "0 ran, 12 already stored" in capsys.readouterr().err

    assert main(["status", "--store", str(store), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["planned"], s["finished"], s["pending"], s["spec_name"]) == (12, 12, 0, "tiny")
    assert main(["status", "--store", str(store)]) == 0
    assert "finished 12" in capsys.readouterr().out

    out = tmp_path / "o.csv"
    assert main(["export", "--store", str(store), "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 12 and {"algorithm.eta_L", "avg_grad_norm_sq", "final_loss", "diverged"} <= set(
        rows[0]
    )

    png = tmp_path / "p.png"
    assert main(["plot", "--store", str(store), "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", "--store", str(store), "--out", str(png), "--x", "algorithm.eta_L"]) == 0
    assert main(["plot", "--store", str(store), "--out", str(png), "--x", "nope"]) == 2
    assert "algorithm.eta_L" in capsys.readouterr().err


def test_cli_errors_are_one_line_exit_2(tmp_path, tiny_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(tiny_path.read_text().replace("dim = 3", "dim = 3\ndims = 4"))
    store = tmp_path / "s.sqlite"
    assert main(["run", str(bad), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "problem.dims" in err and "line 10" in err and not store.exists()
    assert main(["status", "--store", str(tmp_path / "missing.sqlite")]) == 2
    assert main(["run", str(tiny_path), "--store", str(store), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert main(["run", str(tiny_path), "--store", str(store), "--check"]) == 0
    assert "12 task(s)" in capsys.readouterr().out and not store.exists()


def test_top_level_cli_wires_sweep(tmp_path, tiny_path):
    import afltheory.cli as top

    store = tmp_path / "s.sqlite"
    assert top.main(["sweep", "run", str(tiny_path), "--store", str(store), "--progress", "none"]) == 0
    assert top.main(["sweep", "status", "--store", str(store)]) == 0


def test_progress_modes(capsys):
    import io

    from afltheory.sweep.progress import make_progress

    class TTY(io.StringIO):
        def isatty(self):
            return True

    s = io.StringIO()
    p = make_progress(3, 1, None, stream=s)
    for i in range(3):
        p.update(f"{i:064x}")
    p.close()
    assert "[3/3]" in s.getvalue() and "eta" in s.getvalue()
    t = TTY()
    p = make_progress(3, 0, None, stream=t)
    for i in range(3):
        p.update(f"{i:064x}")
    p.close()
    assert "3/3" in t.getvalue()
