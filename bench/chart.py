"""An SVG chart of the rows of `make bench-large` that carry a ``chart`` point: one panel per
figure, the figure against size on a log scale, each point labelled with its value, the target
as a dashed line. Plain SVG text (no plotting library: the benchmark must not pull one in).

A row takes part with ``r["chart"] = {"series": "reindex --full (msg/s)", "x": 100000, "y": 31000.0,
"target": 100000}``; ``target`` is optional.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Any

W, H = 360, 220  # one panel
PAD_L, PAD_R, PAD_T, PAD_B = 58, 16, 34, 36
COLS = 3


def point(series: str, x: float, y: float | None, target: float | None = None) -> dict[str, Any]:
    return {"series": series, "x": x, "y": y, "target": target}


def _size(x: float) -> str:
    for div, unit in ((1_000_000, "M"), (1_000, "k")):
        if x >= div:
            return f"{x / div:g}{unit}"
    return f"{x:g}"


def _num(y: float) -> str:
    if y >= 10_000:
        return f"{y / 1000:,.0f}k"
    if y >= 100:
        return f"{y:,.0f}"
    return f"{y:.2f}".rstrip("0").rstrip(".")


def _panel(name: str, pts: list[dict[str, Any]], ox: int, oy: int) -> list[str]:
    pts = sorted((p for p in pts if p.get("y") is not None), key=lambda p: p["x"])
    out = [f'<g transform="translate({ox},{oy})">',
           f'<rect width="{W}" height="{H}" fill="#fff" stroke="#ddd"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="12" font-weight="bold">'
           f'{escape(name)}</text>']
    if not pts:
        out += [f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" font-size="11">no data</text>', "</g>"]
        return out
    target = next((p["target"] for p in pts if p.get("target") is not None), None)
    xs = [math.log10(p["x"]) for p in pts]
    ys = [float(p["y"]) for p in pts] + ([float(target)] if target is not None else [])
    x0, x1 = min(xs) - 0.3, max(xs) + 0.3
    y1 = max(ys) * 1.15 or 1.0
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def sx(v: float) -> float:
        return PAD_L + (v - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return PAD_T + ph - v / y1 * ph

    out.append(f'<line x1="{PAD_L}" y1="{PAD_T + ph}" x2="{PAD_L + pw}" y2="{PAD_T + ph}" stroke="#888"/>')
    out.append(f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{PAD_T + ph}" stroke="#888"/>')
    for k in range(5):
        v = y1 * k / 4
        out.append(f'<text x="{PAD_L - 4}" y="{sy(v) + 4:.1f}" text-anchor="end" font-size="9" fill="#555">'
                   f'{_num(v)}</text>')
    for p, lx in zip(pts, xs, strict=True):
        out.append(f'<text x="{sx(lx):.1f}" y="{PAD_T + ph + 14}" text-anchor="middle" font-size="10">'
                   f'{_size(p["x"])}</text>')
    if target is not None:
        out.append(f'<line x1="{PAD_L}" y1="{sy(target):.1f}" x2="{PAD_L + pw}" y2="{sy(target):.1f}" '
                   'stroke="#c33" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{PAD_L + pw}" y="{sy(target) - 3:.1f}" text-anchor="end" font-size="9" '
                   f'fill="#c33">target {_num(float(target))}</text>')
    path = " ".join(f'{"M" if i == 0 else "L"}{sx(lx):.1f},{sy(float(p["y"])):.1f}'
                    for i, (p, lx) in enumerate(zip(pts, xs, strict=True)))
    out.append(f'<path d="{path}" fill="none" stroke="#2a6ebb" stroke-width="2"/>')
    for p, lx in zip(pts, xs, strict=True):
        cx, cy = sx(lx), sy(float(p["y"]))
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3" fill="#2a6ebb"/>')
        out.append(f'<text x="{cx:.1f}" y="{cy - 7:.1f}" text-anchor="middle" font-size="10">'
                   f'{_num(float(p["y"]))}</text>')
    out.append("</g>")
    return out


def write(rows: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    """The chart of ``rows``' points at ``path`` (SVG); None when no row has a point."""
    panels: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        p = r.get("chart")
        if p:
            panels.setdefault(p["series"], []).append(p)
    if not panels:
        return None
    n = len(panels)
    rows_n = math.ceil(n / COLS)
    width, height = COLS * (W + 10) + 10, rows_n * (H + 10) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif">',
           f'<rect width="{width}" height="{height}" fill="#f7f7f7"/>',
           f'<text x="10" y="24" font-size="14" font-weight="bold">{escape(title)}</text>']
    for i, (name, pts) in enumerate(panels.items()):
        out += _panel(name, pts, 10 + (i % COLS) * (W + 10), 36 + (i // COLS) * (H + 10))
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")
    return path
