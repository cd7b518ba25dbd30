"""Screens pushed over the main view: a run's detail, and the confirmation before a costly run."""

from __future__ import annotations

from .confirm_run import ConfirmRun
from .run_detail import OpenInPrompt, RunDetailScreen

__all__ = ["ConfirmRun", "OpenInPrompt", "RunDetailScreen"]
