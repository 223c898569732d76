"""Study reports as self-contained HTML pages: the Markdown report
rendered (tables included), every plot of the study's folder embedded as
a data URI, so that one file can be mailed or archived alone."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f3f3f3; }
code { background: #f6f6f6; padding: 0 0.2em; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.meta { color: #555; font-size: 0.9em; }
"""


def _data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()


def page(title: str, body_html: str, meta: str = "") -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>"
            + (f"<p class='meta'>{html.escape(meta)}</p>" if meta else "") + body_html + "</body></html>\n")


def markdown_html(text: str) -> str:
    import markdown

    return markdown.markdown(text, extensions=["tables", "fenced_code"])


def report_html(report_md: Path, meta: str = "") -> Path:
    """Writes ``report.html`` next to ``report_md`` with the folder's PNG
    plots embedded; returns its path."""
    folder = report_md.parent
    text = report_md.read_text()
    title = next((m.group(1) for m in re.finditer(r"^# (.+)$", text, re.M)), folder.name)
    figures = "".join(f"<figure><img alt='{p.name}' src='{_data_uri(p)}'><figcaption><code>{p.name}</code>"
                      "</figcaption></figure>" for p in sorted(folder.rglob("*.png")))
    body = markdown_html(text) + (f"<h2>Figures</h2>{figures}" if figures else "")
    out = folder / "report.html"
    from ..campaign.atomic import write_bytes

    write_bytes(out, page(title, body, meta).encode())
    return out
