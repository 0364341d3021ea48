"""What the engine reports: findings, their fixes, and the catalogue of codes.

A Finding is one graph-break site. Positions are 1-based lines and 0-based
columns counted in Unicode code points (as Python's ``ast`` reports them after
conversion from UTF-8 byte offsets); the LSP layer converts to UTF-16.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, replace
from typing import Optional


class Applicability(str, enum.Enum):
    """How far a fix may be trusted (ruff's sense)."""

    SAFE = "safe"  # keeps the program's meaning; applied by `fix` and on save
    UNSAFE = "unsafe"  # may change meaning in corner cases; needs --unsafe-fixes
    NONE = "none"  # no fix: the site is reported only (declined or unmendable)


class Category(str, enum.Enum):
    SYNTAX = "syntax"
    SIDE_EFFECT = "side-effect"  # [Defer]
    BRANCH = "data-dependent-branch"  # [Where]
    GUARD = "validation-guard"  # [Trap]
    SCALAR = "tensor-to-python"  # .item() and friends
    DYNAMIC_SHAPE = "data-dependent-shape"
    UNSUPPORTED = "unsupported-call"
    COMPILE_PATH = "compile-only-path"  # [Align]: a path only torch.compile takes
    ROUTING = "expert-routing"  # [Route]: mixture-of-experts dispatch by data-dependent shapes


@dataclass(frozen=True)
class Pos:
    line: int  # 1-based
    col: int  # 0-based, code points


@dataclass(frozen=True)
class Span:
    start: Pos
    end: Pos

    def contains_line(self, line: int) -> bool:
        return self.start.line <= line <= self.end.line


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` of the original text with ``text``."""

    span: Span
    text: str


@dataclass
class Fix:
    title: str
    applicability: Applicability
    edits: list[TextEdit] = field(default_factory=list)


@dataclass(frozen=True)
class Condition:
    """The site breaks only when this holds, as far as the analysis can name it: a dtype test,
    `self.training`, a config attribute. Such a finding is shown as information by default."""

    text: str  # "hidden_states is float16", "the module is training"
    kinds: tuple[str, ...] = ()  # "dtype", "training", "config"
    dtypes: tuple[str, ...] = ()  # it needs one of these dtypes ("float16",)
    not_dtypes: tuple[str, ...] = ()  # it needs a dtype other than these
    training: Optional[bool] = None  # True: only in training; False: only in eval


@dataclass
class Finding:
    code: str
    message: str
    span: Span
    rewrite: Optional[str] = None  # "defer" | "where" | "trap" | "align" | None
    applicability: Applicability = Applicability.NONE
    decline_reason: Optional[str] = None  # why no (safe) fix, shown in hover and CLI
    entry: Optional[str] = None  # the compiled entry that puts the site in scope
    entry_span: Optional[Span] = None
    gb_id: Optional[str] = None  # Dynamo graph-break registry id, e.g. "GB0059"
    note: Optional[str] = None  # extra context, e.g. "only on the float16 path"
    fix_title: Optional[str] = None
    condition: Optional[Condition] = None  # breaks only when this holds (named by the analysis)
    # In a notebook: the 1-based position of the cell (span lines are then the cell's own).
    cell: Optional[int] = None
    # The analysis' view of the site (ast node, kinds); used to build the fix on demand.
    # Not serialised, not compared.
    site: object = field(default=None, repr=False, compare=False)

    @property
    def fixable(self) -> bool:
        return self.applicability is not Applicability.NONE

    def to_json(self) -> dict:
        site, self.site = self.site, None
        try:
            d = asdict(self)
        finally:
            self.site = site
        d.pop("site", None)
        d["applicability"] = self.applicability.value
        return d


SEVERITIES = ("error", "warning", "information", "hint")


def severity(f: Finding, conditional: str = "information") -> str:
    """How loudly to show a finding: a syntax error is an error, a break that needs a condition
    the analysis names (`f.condition`) is `conditional` (a setting), every other break a warning."""
    if f.code == "GM001":
        return "error"
    return conditional if f.condition is not None else "warning"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    category: Category
    rewrite: Optional[str]
    summary: str
    gb_id: Optional[str] = None


CATALOGUE: dict[str, Rule] = {
    r.code: r
    for r in [
        Rule("GM001", "syntax-error", Category.SYNTAX, None,
             "The file does not parse; nothing else in it can be checked."),
        Rule("GM101", "print-in-graph", Category.SIDE_EFFECT, "defer",
             "print() inside compiled code breaks the graph.", "GB0059"),
        Rule("GM102", "logging-in-graph", Category.SIDE_EFFECT, "defer",
             "A logging.Logger method inside compiled code breaks the graph.", "GB0291"),
        Rule("GM103", "warning-in-graph", Category.SIDE_EFFECT, "defer",
             "warnings.warn() inside a frame Dynamo inlines breaks the graph.", "GB0007"),
        Rule("GM201", "data-dependent-branch", Category.BRANCH, "where",
             "An if/else whose condition depends on tensor values breaks the graph.", "GB0170"),
        Rule("GM301", "validation-guard", Category.GUARD, "trap",
             "`if <tensor condition>: raise` breaks the graph to evaluate the condition.", "GB0170"),
        Rule("GM401", "tensor-to-python", Category.SCALAR, None,
             "Converting a tensor to a Python value (.item(), .tolist(), int(t), ...) breaks the graph.",
             "GB0124"),
        Rule("GM402", "data-dependent-shape", Category.DYNAMIC_SHAPE, None,
             "An operator whose output shape depends on tensor values breaks the graph.", "GB0036"),
        Rule("GM403", "untraceable-call", Category.UNSUPPORTED, None,
             "A call Dynamo cannot trace (I/O, time, debugger, deepcopy, ...) breaks the graph."),
        Rule("GM404", "deprecated-sdp-kernel", Category.UNSUPPORTED, "sdpa",
             "`with torch.backends.cuda.sdp_kernel(...)` (deprecated) gives Dynamo a context manager it "
             "cannot trace, so the function runs eagerly; torch.nn.attention.sdpa_kernel with the same "
             "backends traces."),
        Rule("GM405", "requires-grad-in-graph", Category.UNSUPPORTED, None,
             "Changing `requires_grad` of a tensor computed inside compiled code (`t.requires_grad = ...`, "
             "`t.detach().requires_grad_()`, a factory's `requires_grad=True` in an inlined frame) breaks "
             "the graph.", "GB0206"),
        Rule("GM406", "deprecated-scalar-first", Category.UNSUPPORTED, "scalar-first",
             "`t.add_(n, x)`, `t.addcmul_(n, a, b)`, `t.addcdiv_(n, a, b)` (deprecated overloads, the number "
             "first) are signatures Dynamo does not handle; the number as `alpha=` / `value=` traces.",
             "GB0117"),
        Rule("GM407", "generator-to-math-product", Category.UNSUPPORTED, "listify",
             "`math.prod(<generator>)` and `math.fsum(<generator>)` are calls Dynamo cannot trace (it runs the "
             "whole function eagerly); given a list comprehension of the same items, they trace.", "GB0055"),
        Rule("GM501", "compile-only-none", Category.COMPILE_PATH, "align",
             "A default built only when not compiling (`if X is None and not is_compiling():`) "
             "leaves X None under torch.compile; a later use of X fails while Dynamo traces and "
             "the whole function falls back to eager.", "GB0088"),
        Rule("GM601", "expert-dispatch", Category.ROUTING, "route",
             "A mixture-of-experts loop selects each expert's tokens with a data-dependent shape "
             "(one-argument torch.where, nonzero, a boolean mask, a `.tolist()` of the experts hit) "
             "and breaks the graph once per expert and layer.", "GB0036"),
        Rule("GM602", "masked-reduction", Category.DYNAMIC_SHAPE, "masked",
             "`x[mask].sum()` / `.mean()` selects a data-dependent number of entries; "
             "`torch.where(mask, x, 0).sum()` has a fixed shape.", "GB0036"),
        Rule("GM603", "masked-copy", Category.DYNAMIC_SHAPE, "masked",
             "`z[m] = y[m]` / `z[m] += v` reads a boolean-mask selection; a torch.where write has a "
             "fixed shape.", "GB0036"),
        Rule("GM604", "nonzero-loop", Category.DYNAMIC_SHAPE, "masked",
             "A loop over `nonzero` rows that sets entries is one boolean-mask write.", "GB0036"),
        Rule("GM605", "grouped-dispatch", Category.ROUTING, "route",
             "Expert sizes read into Python (`.tolist()`) to cut tokens sorted by expert into one "
             "block per expert (`x.split(sizes)`) break the graph in every layer.", "GB0033"),
        Rule("GM606", "truncated-one-hot", Category.DYNAMIC_SHAPE, "onehot",
             "`one_hot(i, C)[..., :n]` with C read from a tensor (`max(i.max() + 1, n)`) breaks the "
             "graph; a comparison with `arange(n)` has the same values and a fixed shape.", "GB0033"),
    ]
}


def carry_over(findings: list[Finding], old: str, new: str) -> list[Finding]:
    """Move findings of `old` to the same lines in `new`; drop those whose lines changed. The
    analysis site is dropped (`site` None): nothing may be rewritten from them (the editor's text
    that does not parse; the sites `fix` did not mend, in the text it wrote)."""
    import difflib

    from graphmend.textlines import split_lines

    if not findings:
        return []
    a, b = split_lines(old), split_lines(new)
    # Lines before and after the edited region map to themselves; only the region between is
    # diffed (the whole file took 9 s in a 50,000-line file, at every keystroke that left it
    # unparsable).
    lo, n = 0, min(len(a), len(b))
    while lo < n and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    mapping: dict[int, int] = {i: i for i in range(1, lo + 1)}
    mapping.update((len(a) - k, len(b) - k) for k in range(hi))
    for blk in difflib.SequenceMatcher(None, a[lo:len(a) - hi], b[lo:len(b) - hi],
                                       autojunk=False).get_matching_blocks():
        for k in range(blk.size):
            mapping[lo + blk.a + k + 1] = lo + blk.b + k + 1
    out = []
    for f in findings:
        s, e = mapping.get(f.span.start.line), mapping.get(f.span.end.line)
        if s is None or e is None or e - s != f.span.end.line - f.span.start.line:
            continue
        out.append(replace(f, span=Span(Pos(s, f.span.start.col), Pos(e, f.span.end.col)), site=None))
    return out
