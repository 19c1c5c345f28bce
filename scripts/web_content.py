"""The web table's card and board names, written from the games' own data.

The views and events of the API carry card ids (``pet_rock_3``,
``trail_mix_1``) and enum names (``KIND_T_REX``, ``DINO_REX``); the web table
shows names and what each card does. This script writes
``service/web/content/<game>.json`` from ``clients/words/content.py`` (the
data files under ``domain/`` and a sentence per effect code), which
``strata play`` reads too, so the terminal and the page name cards alike.
It holds no rules: what is legal comes from the API only.

    .venv/bin/python scripts/web_content.py          # write the files
    .venv/bin/python scripts/web_content.py --check  # exit 1 when stale

``tests/web/test_content.py`` runs the check.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clients.words.content import GAMES

OUT = Path(__file__).resolve().parent.parent / "service" / "web" / "content"


def rendered() -> dict[Path, str]:
    """Each file's path and text."""
    return {
        OUT / f"{game}.json": json.dumps(make(), indent=1, sort_keys=True) + "\n"
        for game, make in GAMES.items()
    }


def main(argv: list[str]) -> int:
    stale = [p for p, text in rendered().items() if not _same(p, text)]
    if "--check" in argv:
        for path in stale:
            print(f"stale: {path} (run .venv/bin/python scripts/web_content.py)")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in rendered().items():
        path.write_text(text, encoding="utf-8")
    return 0


def _same(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") == text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
