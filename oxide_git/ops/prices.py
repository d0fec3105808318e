"""The price of tokens, per model: the table in the package (``resources/prices.json``, which says
where its figures come from and when), overridden by a file of the same shape named by
``OXIDE_PRICES`` or ``git config oxide.prices`` (no network, ever)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from oxide_git.core.errors import OxideError

if TYPE_CHECKING:
    from oxide_git.store.context import Context

FIELDS = ("input", "output", "cache_read", "cache_write")
_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")  # claude-sonnet-4-5-20250929, gpt-5-2025-08-07

Price = tuple[float, float, float, float]  # USD per million tokens, in the order of FIELDS


def _read(text: str, where: str) -> dict[str, Price]:
    try:
        doc = json.loads(text)
        models = doc["models"] if isinstance(doc, dict) and "models" in doc else doc
        if not isinstance(models, dict):
            raise ValueError("no models")
        out = {}
        for name, p in models.items():
            if not isinstance(p, dict) or not isinstance(p.get("input"), int | float) \
                    or not isinstance(p.get("output"), int | float):
                raise ValueError(f"model {name!r} lacks an input or output price")
            inp = float(p["input"])
            out[str(name).lower()] = (inp, float(p["output"]), float(p.get("cache_read", inp)),
                                      float(p.get("cache_write", inp)))
        return out
    except (ValueError, KeyError, TypeError) as e:
        raise OxideError(f"cannot read the price table {where}: {e}",
                         hint='it holds {"models": {"MODEL": {"input": USD, "output": USD, '
                              '"cache_read": USD, "cache_write": USD}}}, USD per million tokens') from e


def load(override: str | None = None) -> dict[str, Price]:
    """The package's table, then ``override``'s models over it (a path; a missing file is an error)."""
    packaged = resources.files("oxide_git").joinpath("resources/prices.json").read_text()
    table = _read(packaged, "in the package")
    if override:
        try:
            text = Path(override).expanduser().read_text()
        except OSError as e:
            raise OxideError(f"cannot read the price table {override}: {e.strerror or e}",
                             hint="point OXIDE_PRICES or `git config oxide.prices` at a readable "
                                  "JSON file") from e
        table.update(_read(text, override))
    return table


def find(table: Mapping[str, Price], model: str | None) -> Price | None:
    """The price of ``model``: its name as is, without a provider prefix, without a date suffix."""
    if not model:
        return None
    name = model.lower()
    for cand in (name, name.rsplit("/", 1)[-1]):
        for c in (cand, _DATE.sub("", cand)):
            if c in table:
                return table[c]
    return None


def for_context(ctx: Context) -> dict[str, Price]:
    """The table a command uses: OXIDE_PRICES's file, else ``git config oxide.prices``'s, over the
    package's."""
    return load(ctx.environ.get("OXIDE_PRICES") or ctx.config("oxide.prices"))
