"""Parse the stage DAG that Ballista writes as Graphviz DOT, tolerantly, into plain data.

Ballista writes one ``subgraph clusterN`` per stage labelled ``Stage <id> [<status>]``,
operator nodes ``stage_<id>_<path>`` with their label, child → parent edges inside a
stage, and writer → reader edges between stages. Labels hold raw newlines and are not
always escaped, so the tokenizer never raises: it skips what it cannot read.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field

# An id is DOT's: a letter, "_" or any non-ASCII character, then those or digits. The
# classes say so by what they leave out: spelling out \x80-\U0010ffff made this pattern
# take 7.5 ms to compile (0.5 ms now), paid by every build that renders a page.
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*"?)
  | (?P<arrow>->|--)
  | (?P<id>[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f][^\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*
      |-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<punct>[{}\[\];,=:])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)
_STAGE_LABEL = re.compile(r"^\s*Stage\s+(\S+?)(?:\s*\[(.*)\])?\s*$", re.DOTALL)
_NODE_STAGE = re.compile(r"^stage_([^_]+)_")
_ESCAPES = {"n": "\n", "l": "\n", "r": "\n", '"': '"', "\\": "\\"}
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_END = ("end", "")


@dataclass
class Operator:
    """One operator node: its DOT name and its (unescaped, multi-line) label."""

    name: str
    label: str


@dataclass
class StageGraph:
    """One stage cluster: its id, the status in its label, its operators and edges."""

    stage_id: str
    status: str
    operators: dict[str, Operator] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class JobGraph:
    """The whole DAG: stages in DOT order and the edges between stages."""

    stages: list[StageGraph] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)

    def stage_of(self) -> dict[str, str]:
        """Map each operator node name to its stage id."""
        return {name: s.stage_id for s in self.stages for name in s.operators}

    def stage_edges(self) -> list[tuple[str, str]]:
        """Return (producer stage, consumer stage) pairs, in first-seen order, deduplicated."""
        owner = self.stage_of()
        seen: dict[tuple[str, str], None] = {}
        for src, dst in self.links:
            a = owner.get(src) or _guess_stage(src)
            b = owner.get(dst) or _guess_stage(dst)
            if a and b and a != b:
                seen[(a, b)] = None
        return list(seen)


def _guess_stage(node: str) -> str | None:
    """Return the stage id Ballista encodes in a node name (``stage_3_0_1`` → ``3``)."""
    found = _NODE_STAGE.match(node)
    return found.group(1) if found else None


def _unquote(token: str) -> str:
    """Return the text of a DOT string token, with ``\\n``-style escapes resolved."""
    if not token.startswith('"'):
        return token
    body = token[1:-1] if len(token) > 1 and token.endswith('"') else token[1:]
    if "\\" not in body:
        return body
    # A backslash and the character after it, left to right; a lone trailing one stays.
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


def _tokens(dot: str) -> list[tuple[str, str]]:
    """Split DOT into (kind, text) tokens, dropping whitespace and comments."""
    result = []
    for match in _TOKEN.finditer(dot):
        kind = match.lastgroup or "other"
        if kind != "ws":
            result.append((kind, match.group()))
    return result


class _Parser:
    """A forgiving recursive-descent reader for the DOT subset Ballista writes."""

    def __init__(self, dot: str) -> None:
        self.toks = _tokens(dot)
        self.pos = 0
        self.graph = JobGraph()

    def peek(self, ahead: int = 0) -> tuple[str, str]:
        """Return the token ``ahead`` places on, or an end marker."""
        try:  # free unless raised, and it is raised only past the end
            return self.toks[self.pos + ahead]
        except IndexError:
            return _END

    def take(self) -> tuple[str, str]:
        """Consume and return the next token."""
        try:
            tok = self.toks[self.pos]
        except IndexError:
            tok = _END
        self.pos += 1
        return tok

    def parse(self) -> JobGraph:
        """Read the whole graph."""
        while self.peek()[0] != "end" and self.peek()[1] != "{":
            self.take()
        if self.peek()[1] == "{":
            self.take()
            self.statements(None)
        return self.graph

    def attrs(self) -> dict[str, str]:
        """Read ``[a=b, c="d"]`` lists (several in a row merge)."""
        found: dict[str, str] = {}
        while self.peek()[1] == "[":
            self.take()
            while self.peek()[0] != "end" and self.peek()[1] != "]":
                kind, text = self.take()
                if kind in ("id", "str") and self.peek()[1] == "=":
                    self.take()
                    found[_unquote(text)] = _unquote(self.take()[1])
            self.take()
        return found

    def statements(self, stage: StageGraph | None) -> None:
        """Read statements until the matching ``}``."""
        while True:
            kind, text = self.peek()
            if kind == "end":
                return
            if text == "}":
                self.take()
                return
            if text in (";", ","):
                self.take()
            elif text == "{":
                self.take()
                self.statements(stage)
            elif kind == "id" and text.lower() == "subgraph":
                self.subgraph(stage)
            elif (
                kind == "id"
                and text.lower() in ("graph", "node", "edge")
                and (self.peek(1)[1] == "[")
            ):
                self.take()
                self.attrs()
            elif kind in ("id", "str"):
                self.node_or_edge(stage)
            else:
                self.take()

    def subgraph(self, outer: StageGraph | None) -> None:
        """Read a subgraph; a ``cluster`` at the top level is a stage."""
        self.take()
        name = ""
        if self.peek()[0] in ("id", "str"):
            name = _unquote(self.take()[1])
        if self.peek()[1] != "{":
            return
        self.take()
        if outer is None and name.startswith("cluster"):
            stage = StageGraph(stage_id="", status="")
            self.graph.stages.append(stage)
            self.statements(stage)
            if not stage.stage_id:
                guessed = {g for g in map(_guess_stage, stage.operators) if g}
                stage.stage_id = guessed.pop() if len(guessed) == 1 else name
        else:
            self.statements(outer)

    def node_or_edge(self, stage: StageGraph | None) -> None:
        """Read ``a = b``, ``a [attrs]`` or ``a -> b -> c [attrs]``."""
        first = _unquote(self.take()[1])
        if self.peek()[1] == "=":
            self.take()
            value = _unquote(self.take()[1])
            if stage is not None and first == "label":
                found = _STAGE_LABEL.match(value)
                if found:
                    stage.stage_id = found.group(1)
                    stage.status = (found.group(2) or "").strip()
            return
        chain = [first]
        while self.peek()[0] == "arrow":
            self.take()
            if self.peek()[0] not in ("id", "str"):
                break
            chain.append(_unquote(self.take()[1]))
        attrs = self.attrs()
        if len(chain) == 1:
            self.declare(stage, first, attrs.get("label"))
            return
        for src, dst in itertools.pairwise(chain):
            if stage is None:
                self.graph.links.append((src, dst))
            else:
                self.declare(stage, src, None)
                self.declare(stage, dst, None)
                stage.edges.append((src, dst))

    @staticmethod
    def declare(stage: StageGraph | None, name: str, label: str | None) -> None:
        """Record an operator node in its stage (a later label wins)."""
        if stage is None:
            return
        node = stage.operators.get(name)
        if node is None:
            stage.operators[name] = Operator(name, label if label is not None else name)
        elif label is not None:
            node.label = label


# Recurring queries write the same DOT job after job: keep the last few graphs. A cached
# JobGraph is shared, so nothing may change it (or anything in it).
@functools.lru_cache(maxsize=256)
def parse(dot: str) -> JobGraph:
    """Parse a job's DOT into stages, operators and edges; never raises on bad input."""
    return _Parser(dot).parse()
