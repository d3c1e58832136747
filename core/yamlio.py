"""YAML reading shared by the world data pack, task files and run specs.

libyaml's C loader is about five times faster than the pure-Python one (a task file: ~10 ms instead of
~50 ms); it is used wherever PyYAML was built with it.

Input is treated as hostile: :func:`read_yaml_file` refuses a file over the size cap before reading it and
a file that is not UTF-8, naming the file and where; :func:`load_yaml` refuses a mapping with the same key
twice (YAML would silently keep the last one) naming both lines, and bounds what aliases may add (a
"billion laughs" document of a few hundred bytes expands to gigabytes once anything walks it) and refuses
an alias that contains itself. Both checks walk the composed node graph once, before anything is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

YAML_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_FILE_BYTES = 2 * 1024 * 1024  # a task file or run spec; the shipped tasks are under 20 KB
MAX_ALIAS_EXPANSION = 10_000  # values that aliases may add beyond the document as written
MAX_NODES = 50_000  # values in one task file or run spec (the largest shipped task has about 2,000)


class YamlInputError(ValueError):
    """Input refused before or while parsing. ``where`` is "line N" (or "(file)"), ``fix`` says what to do."""

    def __init__(self, where: str, message: str, fix: str):
        self.where, self.message, self.fix = where, message, fix
        super().__init__(f"{where}: {message} (fix: {fix})")


def read_yaml_file(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a YAML file: refused (YamlInputError) if larger than ``max_bytes`` or not UTF-8.
    OSError (missing, unreadable) is left to the caller, which knows what the file was for."""
    p = Path(path)
    size = p.stat().st_size
    if size > max_bytes:
        raise YamlInputError("(file)", f"the file is {size:,} bytes, over the {max_bytes:,}-byte limit",
                             "split it or remove bulk data (task and spec files are a few KB)")
    with p.open("rb") as f:
        data = f.read(size + 1)  # the size it had (a read of max_bytes would allocate max_bytes)
        if len(data) > size:  # it grew meanwhile: read on, still capped
            data += f.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:
        raise YamlInputError("(file)", f"the file is over the {max_bytes:,}-byte limit",
                             "split it or remove bulk data")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlInputError(f"line {line}", f"the file is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                                             f"column {column})", "save the file as UTF-8") from None


def load_yaml(text: str, *, checked: bool = True, max_alias_expansion: int = MAX_ALIAS_EXPANSION,
              max_nodes: int = MAX_NODES) -> Any:
    """Parse YAML safely (no arbitrary objects, no duplicate keys, bounded size and aliases).

    Raises ``yaml.YAMLError`` (with line/column marks) for bad syntax and :class:`YamlInputError` for a
    duplicate key, a recursive alias, or a document with more than ``max_nodes`` nodes or whose aliases
    would add more than ``max_alias_expansion`` nodes. ``checked=False`` skips these checks (for data
    shipped with the package, read at every start)."""
    if checked:
        check_events(text, max_alias_expansion=max_alias_expansion, max_nodes=max_nodes)
    return yaml.load(text, Loader=YAML_LOADER)


_SCALAR, _ALIAS, _SEQUENCE, _MAPPING, _END = range(5)
_KINDS = {yaml.ScalarEvent: _SCALAR, yaml.AliasEvent: _ALIAS, yaml.SequenceStartEvent: _SEQUENCE,
          yaml.MappingStartEvent: _MAPPING, yaml.SequenceEndEvent: _END, yaml.MappingEndEvent: _END}
_MERGE = "tag:yaml.org,2002:merge"


def check_events(text: str, *, max_alias_expansion: int = MAX_ALIAS_EXPANSION, max_nodes: int = MAX_NODES) -> None:
    """One pass over libyaml's parse events, before anything is built: node count, duplicate keys, aliases.

    Parsing events costs a fraction of building the document and stops at the first problem, so a huge or
    hostile document is refused in bounded time. An anchored node's size is known when it ends; an alias
    adds that size minus one (the alias event itself); an alias to a node still open is recursive."""
    loader = YAML_LOADER(text)
    try:
        nodes = 0  # events that are nodes (scalars, aliases, sequence and mapping starts)
        added = 0  # nodes that aliases add beyond the document as written
        sizes: dict[str, int] = {}  # anchor -> expanded size of its node (once closed)
        # open containers, innermost last: [nodes at start, added at start, anchor, keys seen (mappings only),
        # whether the next node is a key (mappings only)]
        open_: list[list[Any]] = []
        while True:
            ev = loader.get_event()
            if ev is None:
                return
            kind = _KINDS.get(type(ev))
            if kind is None:
                continue  # stream and document start/end
            if kind == _END:
                start_nodes, start_added, anchor, _, _ = open_.pop()
                if anchor is not None:
                    sizes[anchor] = (nodes - start_nodes) + (added - start_added) + 1
                if open_ and open_[-1][3] is not None:
                    open_[-1][4] = not open_[-1][4]  # the closed collection was a mapping's key or value
                continue
            nodes += 1
            if nodes > max_nodes:
                raise YamlInputError(f"line {ev.start_mark.line + 1}", f"the document has more than {max_nodes:,} "
                                     "values", "split it or remove bulk data (a task file has a few thousand)")
            top = open_[-1] if open_ else None
            in_mapping = top is not None and top[3] is not None
            if kind == _ALIAS:
                if ev.anchor not in sizes:  # unknown anchors are the parser's error; open ones are recursive
                    if any(c[2] == ev.anchor for c in open_):
                        raise YamlInputError(f"line {ev.start_mark.line + 1}", f"alias *{ev.anchor} refers to the "
                                             "node that contains it (a recursive alias)", "remove the alias")
                    return  # the real load reports the undefined alias with its line
                added += sizes[ev.anchor] - 1
                if added > max_alias_expansion:
                    raise YamlInputError(f"line {ev.start_mark.line + 1}", f"aliases (*name) would expand the "
                                         f"document by more than {max_alias_expansion:,} values",
                                         "write the values out instead of nesting aliases of aliases")
                if in_mapping:
                    top[4] = not top[4]
                continue
            if kind == _SCALAR:
                if ev.anchor is not None:
                    sizes[ev.anchor] = 1
                if in_mapping:
                    if top[4]:
                        _check_key(top[3], loader.resolve(yaml.ScalarNode, ev.value, ev.implicit), ev)
                    top[4] = not top[4]
                continue
            # a sequence or mapping starts; it flips its parent's key/value position when it ends
            open_.append([nodes, added, ev.anchor, {} if kind == _MAPPING else None, True])
    finally:
        loader.dispose()


def _check_key(seen: dict[tuple[str, str], int], tag: str, ev: Any) -> None:
    """A scalar mapping key: refused if the same key (same resolved type and text) came before."""
    if tag == _MERGE:
        return  # `<<` merge keys may repeat
    key, line = (tag, ev.value), ev.start_mark.line + 1
    first = seen.get(key)
    if first is not None:
        name = ev.value if len(ev.value) <= 60 else ev.value[:57] + "..."
        raise YamlInputError(f"line {line}", f"duplicate key '{name}' (first on line {first}, again on line "
                             f"{line}); YAML would silently keep only the last", "remove or rename one of them")
    seen[key] = line
