"""Shared fixtures. Each area keeps its own helpers in its own module; this file stays small."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return REPO
