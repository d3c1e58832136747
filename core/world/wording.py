"""Small helpers for the texts the engine and the world backends write for the model."""

from __future__ import annotations


def count_of(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: "1 tile", "2 tiles", "0 tiles". A result that read
    "Walked 1 tiles" looked careless to pilots, and a text that looks careless is read as less true."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def tiles(n: int) -> str:
    """``n`` tiles, as results and observations say it: "1 tile", "5 tiles"."""
    return count_of(n, "tile")
