"""One funnel.json shape for every curation pipeline (report/funnel.py): stages merge in order,
parts sum to their stage, files of part 1 written before the shared shape still read, and a file
that is no funnel is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vidbench.core.errors import ConfigError
from vidbench.report.funnel import Funnel, StageCount, funnel_markdown, record_stage


def test_stages_merge_in_pipeline_order_and_parts_sum(tmp_path: Path) -> None:
    order = ("render", "motion", "qa")
    record_stage(tmp_path, "qa", StageCount(5, 2, {"leak": 3}, unit="questions"), order)
    record_stage(tmp_path, "render", StageCount(4, 3, {"crashed": 1}), order)
    funnel = Funnel.read(tmp_path)
    assert list(funnel.stages) == ["render", "qa"]
    assert json.loads((tmp_path / "funnel.json").read_text())["schema_version"] == 1

    parts = {
        "audio": StageCount(2, 1, {"blind": 1}, unit="questions", pending=1),
        "visual": StageCount(3, 3, unit="questions", uncounted={"call errors": 2}),
    }
    total = StageCount.summed(parts, "questions")
    assert (total.entered, total.kept, total.dropped, total.pending) == (5, 4, {"blind": 1}, 1)
    assert total.uncounted == {"call errors": 2} and set(total.parts) == {"audio", "visual"}
    table = funnel_markdown(Funnel({"filter": total}))
    assert (
        "| filter | questions | 5 | 4 | 1 | blind 1; not counted: call errors 2; not done" in table
    )
    assert "| filter · visual | questions | 3 | 3 | 0 | not counted: call errors 2 |" in table


def test_part_one_files_written_before_the_shared_shape_read(tmp_path: Path) -> None:
    old = {"stages": {"render": {"entered": 3, "kept": 2, "dropped": {"no animation": 1},
                                 "problems": [], "unit": "objects"}}}  # fmt: skip
    (tmp_path / "funnel.json").write_text(json.dumps(old))
    stage = Funnel.read(tmp_path).stages["render"]
    assert (stage.entered, stage.kept, stage.dropped, stage.parts) == (
        3,
        2,
        {"no animation": 1},
        {},
    )


@pytest.mark.parametrize("text", ["not json", '{"stages": 3}', '{"rows": []}', "[1, 2]"])
def test_a_file_that_is_no_funnel_is_named(tmp_path: Path, text: str) -> None:
    (tmp_path / "funnel.json").write_text(text)
    with pytest.raises(ConfigError, match=r"funnel.json: not a funnel file"):
        Funnel.read(tmp_path)
