"""The cache keys of a ``[tool.crux-devtools.models.NAME]`` profile: read, checked with a one-line
error at their line, and turned into the planner's ``CachePolicy``."""

from __future__ import annotations

from crux_devtools.core.plan import cache_plan
from crux_devtools.core.plan.cache_plan import CachePolicy
from crux_devtools.inspector.session import discovery
from crux_devtools.inspector.session.discovery import read_model_config
from crux_devtools.inspector.worker.planning import PlanningDefaults, cache_policy


def test_cache_auto_with_its_minimum_and_ttl_becomes_the_profiles_policy(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.crux-devtools.models.claude]\ncontext_window = 200000\ncache = \"auto\"\ncache_min_tokens = 1024\ncache_ttl = \"1h\"\n"
        "cache_read_price = 0.3\ncache_write_price = 3.75\ncache_write_1h_price = 6\n"
        "[tool.crux-devtools.models.plain]\ncontext_window = 8000\n",
        encoding="utf-8",
    )
    config, errors = read_model_config(tmp_path)
    assert errors == []
    assert cache_policy(config["models"]["claude"]) == CachePolicy("auto", 1024, "1h", True)
    assert cache_policy(config["models"]["plain"]) is None
    defaults = PlanningDefaults.load(tmp_path, config)
    assert defaults.resolve("claude").cache == CachePolicy("auto", 1024, "1h", True)
    assert defaults.resolve("plain").cache is None


def test_bad_cache_keys_are_config_errors_at_their_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.crux-devtools.models.a]\ncontext_window = 8000\ncache = \"always\"\n"
        "[tool.crux-devtools.models.b]\ncontext_window = 8000\ncache_min_tokens = 0\n"
        "[tool.crux-devtools.models.c]\ncontext_window = 8000\ncache_ttl = \"10m\"\n",
        encoding="utf-8",
    )
    config, errors = read_model_config(tmp_path)
    assert config["models"] == {}
    assert [(e["line"], e["message"].split("] ", 1)[1][:30]) for e in errors] == [
        (3, 'cache must be "auto" (place pr'), (6, "cache_min_tokens must be a pos"), (9, 'cache_ttl must be "5m" or "1h"'),
    ]


def test_the_servers_copy_of_the_planners_cache_tables_is_the_planners():
    """The server checks a profile without importing the core: its copies must not drift."""
    assert discovery.BREAKPOINT_FIELDS == cache_plan.BREAKPOINT_FIELDS
    assert discovery.CACHE_TTLS == cache_plan.CACHE_TTLS


def test_the_servers_counting_confidences_are_the_planners():
    from crux_devtools.core.plan import budget

    assert discovery.COUNTING_CONFIDENCES == budget.COUNTING_CONFIDENCES
