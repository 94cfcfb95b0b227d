"""A missing optional dependency stops the command at once, naming the extra to install."""

from __future__ import annotations

import pytest

from vidbench.core.errors import ConfigError
from vidbench.extras import installed, require
from vidbench.scoring.captions.metrics import check_installed


def test_require_names_missing_modules_and_the_extra() -> None:
    require("x", ("json", "numpy"), "dev")  # all there: nothing happens
    with pytest.raises(ConfigError) as e:
        require("model 'hf:m'", ("json", "no_such_module_xyz", "nope.sub"), "hf")
    assert str(e.value) == (
        "model 'hf:m' needs no_such_module_xyz, nope.sub (not installed): "
        "pip install 'vidbench[hf]'"
    )
    assert installed("json") and not installed("nope.sub")


def test_caption_metrics_check(monkeypatch) -> None:
    check_installed(("bleu", "sbert"))
    monkeypatch.setattr("vidbench.extras.installed", lambda module: module != "nltk")
    with pytest.raises(
        ConfigError, match=r"caption metrics meteor needs nltk .*vidbench\[captions\]"
    ):
        check_installed(("meteor",))
    check_installed(("bleu",))  # BLEU does not need nltk
