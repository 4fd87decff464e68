"""Draw bench/load.py's rows (its --json file) as an SVG: p95 first token per burst size and per arrival rate."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

WIDTH, HEIGHT, PAD = 420, 300, 52
COLOURS = {"embedded": "#1f6feb", "production": "#d1242f"}


def _scale(values: list[float], size: float, *, log: bool) -> tuple[float, float, Any]:
    low, high = min(values), max(values)
    if log:
        low, high = math.log10(max(low, 1e-3)), math.log10(max(high, 1e-3))
    high = high if high > low else low + 1
    return low, high, (lambda v: (((math.log10(max(v, 1e-3)) if log else v) - low) / (high - low)) * size)


def _panel(rows: list[dict[str, Any]], kind: str, x_label: str, left: float) -> list[str]:
    """One chart: x = burst size or rate, y = p95 first token (log ms), a line per profile."""
    chosen = [r for r in rows if r["kind"] == kind and r.get("ok") and "reindex_progress" not in r]
    if not chosen:
        return []
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    _, _, sx = _scale([r["size"] for r in chosen], inner_w, log=kind == "burst")
    ys = [r["first_token_p95_ms"] for r in chosen] + [r["llm_first_token_p95_ms"] for r in chosen]
    y_low, y_high, sy = _scale(ys, inner_h, log=True)
    out = [f'<g transform="translate({left},0)">',
           f'<rect x="{PAD}" y="{PAD}" width="{inner_w}" height="{inner_h}" fill="none" stroke="#999"/>',
           f'<text x="{WIDTH / 2}" y="{HEIGHT - 12}" text-anchor="middle">{x_label}</text>',
           f'<text x="14" y="{HEIGHT / 2}" transform="rotate(-90 14 {HEIGHT / 2})" text-anchor="middle">'
           "p95 first token (ms, log)</text>"]
    for exponent in range(math.floor(y_low), math.ceil(y_high) + 1):
        y = HEIGHT - PAD - sy(10 ** exponent)
        if PAD <= y <= HEIGHT - PAD:
            out.append(f'<text x="{PAD - 4}" y="{y + 4}" text-anchor="end" font-size="10">{10 ** exponent:g}</text>')
    for size in sorted({r["size"] for r in chosen}):
        out.append(f'<text x="{PAD + sx(size)}" y="{HEIGHT - PAD + 14}" text-anchor="middle" font-size="10">'
                   f"{size:g}</text>")
    for profile, colour in COLOURS.items():
        mine = sorted((r for r in chosen if r["profile"] == profile), key=lambda r: r["size"])
        for key, dash in (("first_token_p95_ms", ""), ("llm_first_token_p95_ms", ' stroke-dasharray="4 3"')):
            points = " ".join(f"{PAD + sx(r['size']):.1f},{HEIGHT - PAD - sy(r[key]):.1f}" for r in mine)
            if points:
                out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
    out.append("</g>")
    return out


def render(rows: list[dict[str, Any]]) -> str:
    """The whole SVG document."""
    body = _panel(rows, "burst", "simultaneous streams (burst)", 0) + \
        _panel(rows, "rate", "arrivals per second (open loop)", WIDTH)
    legend = [f'<text x="{PAD + 340 * i}" y="20" fill="{colour}">{profile}: solid ours, dashed fake LLM alone</text>'
              for i, (profile, colour) in enumerate(COLOURS.items())]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * WIDTH}" height="{HEIGHT}" '
            f'font-family="sans-serif" font-size="12">' + "".join(legend + body) + "</svg>\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rows", type=Path, help="bench/load.py --json output")
    parser.add_argument("svg", type=Path)
    args = parser.parse_args()
    args.svg.write_text(render(json.loads(args.rows.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
