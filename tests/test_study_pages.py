"""The study pages (docs/experiments/*.md) say what the full studies found:
every figure stored from the last full run (mediasim.validation.study_pages)
is on its page, and the code that made them is the code as it is now."""

import json

from mediasim import experiments
from mediasim.validation import output_hashes, study_figures, study_pages

UPDATE = "python -m mediasim.validation.study_pages --run DIR --update"


def test_every_study_has_stored_figures():
    figures = study_pages.load()["figures"]
    assert set(figures) == set(experiments.STUDIES) == set(study_figures.FIGURES)
    for study, figs in figures.items():
        assert len(figs) >= 2, study
        assert all(t.strip() for t in figs.values()), study
        assert sum(any(ch.isdigit() for ch in t) for t in figs.values()) >= len(figs) / 2, study


def test_every_stored_figure_is_on_its_page():
    missing = study_pages.unsaid(study_pages.load()["figures"])
    assert missing == [], "\n".join(f"{s}: {n}: {t}" for s, n, t in missing)


def test_the_stored_figures_come_from_the_code_as_it_is():
    # A change that moves a quick study's tables, a study's full-size
    # parameters or its sensitivity values needs the full studies run again.
    assert study_pages.load()["key"] == study_pages.key(), f"results have moved since the figures were stored: {UPDATE}"


def test_the_key_follows_the_quick_studies_and_nothing_else():
    base = output_hashes.load_baseline()
    key = study_pages.key(base)
    study_entry = next(k for k in base if k.startswith("study:rmcat:"))
    example_entry = next(k for k in base if k.startswith("example:"))
    assert study_pages.key({**base, study_entry: "0" * 32})["quick_outputs"] != key["quick_outputs"]
    assert study_pages.key({**base, example_entry: "0" * 32}) == key
    assert len(set(key["studies"].values())) == len(experiments.STUDIES)


def test_the_key_follows_the_variants(monkeypatch):
    key = study_pages.key()
    variant, figures_of = study_figures.VARIANTS["rmcat-restart"]
    moved = study_figures.Variant(variant.study, (*variant.settings, ("replications", 3)), variant.cases)
    monkeypatch.setitem(study_figures.VARIANTS, "rmcat-restart", (moved, figures_of))
    assert study_pages.key()["variants"] != key["variants"]
    assert study_pages.key()["studies"] == key["studies"]


def test_the_key_follows_the_values_a_studys_sensitivity_runs_set(monkeypatch):
    from mediasim.experiments import rmtp_sensitivity, svc_sensitivity

    key = study_pages.key()["studies"]
    monkeypatch.setattr(rmtp_sensitivity, "STATED_VALUES", (("rcv_hack_interval_ms", 150.0, 900.0),))
    monkeypatch.setattr(svc_sensitivity, "OPEN_VALUES", svc_sensitivity.OPEN_VALUES[1:])
    moved = study_pages.key()["studies"]
    assert {s for s in key if moved[s] != key[s]} == {"rmtp", "svc"}


def test_a_page_that_says_another_figure_is_caught(tmp_path):
    figures = {"rmcat": {"a": "settled 0.877 and\n 0.961", "b": "| 5.1 | 0.877 |"}}
    page = tmp_path / "rmcat.md"
    # Wrapped otherwise, the same text: said.
    page.write_text("text settled 0.877\nand 0.961 more\n\n| 5.1 | 0.877 | 0.9 |\n")
    assert study_pages.unsaid(figures, lambda s: tmp_path / f"{s}.md") == []
    page.write_text("text settled 0.878 and 0.961 more\n\n| 5.1 | 0.877 | 0.9 |\n")
    assert study_pages.unsaid(figures, lambda s: tmp_path / f"{s}.md") == [
        ("rmcat", "a", "settled 0.877 and\n 0.961")]


def test_a_report_table_is_read_cell_by_cell(tmp_path):
    (tmp_path / "report.md").write_text(
        "# Study\n\n## The shapes\n\nIntro.\n\n| expected   | measured | holds |\n|:--|:--|:--|\n"
        "| a rule     | 0.5      | True  |\n\nBetween.\n\n| x | y |\n|--:|--:|\n| 1 | 2 |\n\n"
        "## Next\n\n| z |\n|--|\n| 9 |\n")
    assert study_figures.report_table(tmp_path, "The shapes") == [["expected", "measured", "holds"],
                                                                  ["a rule", "0.5", "True"]]
    assert study_figures.report_table(tmp_path, "The shapes", 1) == [["x", "y"], ["1", "2"]]
    assert study_figures.table_rows(tmp_path, "Next", "z") == {"z, header": "| z |", "z, row 1": "| 9 |"}
    for heading, index in (("Missing", 0), ("The shapes", 2)):
        try:
            study_figures.report_table(tmp_path, heading, index)
        except ValueError as e:
            assert heading in str(e)
        else:
            raise AssertionError(f"{heading} {index}: no error")


def test_the_stored_file_is_what_save_writes(tmp_path):
    stored = study_pages.load()
    out = tmp_path / "pages.json"
    study_pages.save(stored["figures"], out)
    assert out.read_text() == study_pages.STORED.read_text()


def test_only_a_folder_the_current_code_ran_is_read(tmp_path, capsys):
    # No key: a folder of plain `mediasim reproduce` runs, or a --run cut short.
    assert study_pages.main(["--from", str(tmp_path)]) == 2
    assert "no key.json" in capsys.readouterr().out
    # Another code's key: refused before any figure is read.
    stale = {**study_pages.key(), "quick_outputs": "0" * 32}
    (tmp_path / study_pages.KEY_FILE).write_text(json.dumps(stale))
    assert study_pages.main(["--from", str(tmp_path), "--update"]) == 2
    assert "made by other code" in capsys.readouterr().out
    # The current key: accepted (here the studies' folders are then missing).
    (tmp_path / study_pages.KEY_FILE).write_text(json.dumps(study_pages.key()))
    study_pages.check_key(tmp_path)


def test_a_bad_worker_count_is_named(capsys):
    import pytest

    with pytest.raises(SystemExit) as e:
        study_pages.main(["--run", "unused", "--workers", "0"])
    assert e.value.code == 2 and "--workers must be at least 1 (got 0)" in capsys.readouterr().err
