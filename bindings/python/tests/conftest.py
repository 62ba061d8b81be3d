"""Every test runs in a fresh directory, so that Generator()'s defaults (ringflake.db and
ringflake.state in the working directory) never meet another test's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)
