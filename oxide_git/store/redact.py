"""Secret redaction: every hit of a rule becomes ``[REDACTED:<kind>]`` and is counted per kind.

The rules are data (``redact_rules.RULES``); each has cheap literal hints so that a string holding
none of them is never scanned by a regex. The allowlist and ``git config oxide.redact`` are read per
repository.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oxide_git.core import codec
from oxide_git.core.model import Message, PartType, Session
from oxide_git.store.redact_rules import KEY_RULES, NOT_BEFORE, PASSWORD_HINTS, RULES, SECRET_HINTS, Rule
from oxide_git.store.secretgate import PASSWORD_TAIL, SECRET_TAIL, Gate

if TYPE_CHECKING:
    from oxide_git.store import logread

ALLOWLIST_FILE = ".oxideallow"
MARK = "[REDACTED:{}]"
COUNTS_KEY = "redactions"  # Message.extra[COUNTS_KEY]: this message's hits per kind
FIELDS_KEY = "redacted_fields"  # Session.extra[FIELDS_KEY]: hits in the session's own fields


class Redactor:
    """The compiled rules plus an allowlist; ``text``/``value`` return the redacted copy and count."""

    def __init__(self, allow: Iterable[str] = (), rules: Iterable[Rule] = RULES) -> None:
        rules = list(rules)
        self._rules = rules
        self._compiled: list[tuple[Rule, re.Pattern[str], re.Pattern[str] | None, bool]] | None = None
        self.allow: list[re.Pattern[str]] = []
        for line in allow:
            try:
                self.allow.append(re.compile(line))
            except re.error:
                self.allow.append(re.compile(re.escape(line)))
        # Hints are looked for in the lowercased string (``in`` is far faster than any regex);
        # only the rules whose hints occur then run.
        self._gate = tuple(sorted({h for r in rules for h in r.hints}))
        self._gate_rx: re.Pattern[str] | None = None
        self._key_rules: dict[str, tuple[Any, ...]] = {}  # dict key -> the key rules it matches
        self._hints = [frozenset(r.hints) for r in rules]
        # Dict keys naming secrets (KEY_RULES) use the same words as the two assignment rules.
        self.gate = Gate([(h, r.tail) for r in rules for h in r.hints]
                         + [(h, PASSWORD_TAIL) for h in PASSWORD_HINTS]
                         + [(h, SECRET_TAIL) for h in SECRET_HINTS])

    @property
    def rules(self) -> list[tuple[Rule, re.Pattern[str], re.Pattern[str] | None, bool]]:
        """The rules compiled, on first use: most processes that write never need them (the
        gate says no), and compiling them all costs milliseconds."""
        if self._compiled is None:
            # A lowercase rule's regex runs on the lowercased string; re.I is the fallback for the
            # rare string whose lowercase form has another length (positions would not line up).
            self._compiled = [(r, re.compile(r.regex), re.compile(r.regex, re.I) if r.lower else None,
                               "secret" in r.regex) for r in self._rules]
        return self._compiled

    def _hint_search(self, low: str) -> bool:
        """Does any hint occur in ``low``? One C-level scan (most strings have none); the rules
        themselves are only compiled for a string where one does."""
        if self._gate_rx is None:
            if not self._gate:
                return False
            self._gate_rx = re.compile("|".join(map(re.escape, self._gate)))
        return self._gate_rx.search(low) is not None

    def allowed(self, hit: str) -> bool:
        return any(p.search(hit) for p in self.allow)

    def text(self, s: str, counts: Counter[str]) -> str:
        """``s`` with every hit replaced; hits are added to ``counts``."""
        if len(s) < 8:
            return s
        low: str | None = s.lower()
        if not self._hint_search(low):  # type: ignore[arg-type]
            return s
        found = {h for h in self._gate if h in low}  # type: ignore[operator]
        if not found:
            return s
        for (rule, rx, rx_i, grouped), hints in zip(self.rules, self._hints, strict=True):
            if found.isdisjoint(hints):
                continue
            if rule.lower:
                if low is None:
                    low = s.lower()
                same = len(low) == len(s)
                out = self._apply(rule, rx if same else rx_i, grouped, s, low if same else s,  # type: ignore[arg-type]
                                  counts)
            else:
                out = self._apply(rule, rx, grouped, s, s, counts)
            if out is not s:
                s, low = out, None
        return s

    def _apply(self, rule: Rule, rx: re.Pattern[str], grouped: bool, s: str, target: str,
               counts: Counter[str]) -> str:
        pieces: list[str] = []
        last = 0
        for m in rx.finditer(target):
            if rule.before and m.start() > 0 and s[m.start() - 1] in NOT_BEFORE[rule.before]:
                continue
            a, b = m.span("secret") if grouped else m.span()
            if a < 0:
                continue
            hit = s[a:b]
            if (rule.check is not None and not rule.check(hit)) or self.allowed(hit):
                continue
            counts[rule.kind] += 1
            pieces += [s[last:a], MARK.format(rule.kind)]
            last = b
        if not pieces:
            return s
        pieces.append(s[last:])
        return "".join(pieces)

    def value(self, v: Any, counts: Counter[str], key: str | None = None) -> Any:
        """Any JSON-like value with every string in it redacted (dict keys naming secrets too)."""
        if isinstance(v, str):
            if key is not None and len(v) >= 4 and not v.startswith("[REDACTED:"):
                rules = self._key_rules.get(key)
                if rules is None:
                    rules = tuple(r for r in KEY_RULES if r[0].fullmatch(key))
                    if len(self._key_rules) < 4096:
                        self._key_rules[key] = rules
                for _rx, kind, check, n in rules:
                    if len(v) >= n and check(v) and not self.allowed(v):
                        counts[kind] += 1
                        return MARK.format(kind)
            return self.text(v, counts)
        if isinstance(v, Mapping):
            out = {k: self.value(x, counts, k if isinstance(k, str) else None) for k, x in v.items()}
            return v if all(out[k] is v[k] for k in v) else out
        if isinstance(v, list | tuple):
            items = [self.value(x, counts) for x in v]
            return v if all(a is b for a, b in zip(items, v, strict=True)) else type(v)(items)
        return v

    def message(self, m: Message) -> tuple[Message, Counter[str]]:
        """The message with every string of every part, ``extra`` and ``unknown`` redacted."""
        m2, counts, _blob = self._gated(m)
        return m2, counts

    def encoded(self, m: Message) -> tuple[Message, bytes]:
        """``message(m)`` and its payload (``codec.encode_message``), encoded once."""
        m2, _counts, blob = self._gated(m)
        return m2, blob if blob is not None else codec.encode_message(m2)

    def _gated(self, m: Message) -> tuple[Message, Counter[str], bytes | None]:
        """The message is encoded first and ``secretgate`` scans the bytes: only a message it cannot
        clear is walked. Also the encoding when it is still the message's."""
        blob, scan = codec.encode_message_scan(m)
        if not self.gate.maybe(scan):
            return m, Counter(), blob
        m2, counts = self.walk(m)
        return m2, counts, blob if m2 is m else None

    def reencoded(self, blob: bytes, scan: bytes) -> tuple[bytes, Message | None]:
        """``encoded`` for a message that arrives encoded (by an import's parser process), with
        ``scan`` its part that redaction reads: the same bytes when the gate clears them, else the
        message decoded and walked: its new bytes and, when it changed, the redacted message."""
        if not self.gate.maybe(scan):
            return blob, None
        m = codec.decode_message(blob)
        m2, _counts = self.walk(m)
        return (blob, None) if m2 is m else (codec.encode_message(m2), m2)

    def walk(self, m: Message) -> tuple[Message, Counter[str]]:
        """``message`` without the gate: every string visited (what the gate is held to)."""
        counts: Counter[str] = Counter()
        parts = []
        for p in m.parts:
            data = p.data
            if p.type == PartType.IMAGE and "data" in data:  # base64 pixels: nothing to read
                rest_in = {k: x for k, x in data.items() if k != "data"}
                rest = self.value(rest_in, counts)
                data = data if rest is rest_in else {**rest, "data": data["data"]}
            else:
                data = self.value(data, counts)
            parts.append(p if data is p.data else replace(p, data=data))
        extra = {k: x for k, x in m.extra.items() if k != COUNTS_KEY}
        extra = self.value(extra, counts)
        unknown = self.value(m.unknown, counts)
        if not counts:
            return m, counts
        extra = {**extra, COUNTS_KEY: dict(sorted((message_counts(m) + counts).items()))}
        return replace(m, parts=tuple(parts), extra=extra, unknown=unknown), counts

    def session(self, s: Session) -> Session:
        """The session's own fields (title, extra, unknown) redacted; their hits in extra."""
        counts: Counter[str] = Counter()
        title = self.text(s.title, counts) if s.title else s.title
        extra = self.value({k: x for k, x in s.extra.items() if k != FIELDS_KEY}, counts)
        unknown = self.value(s.unknown, counts)
        if not counts:
            return s
        return replace(s, title=title, unknown=unknown,
                       extra={**extra, FIELDS_KEY: dict(sorted(counts.items()))})


def message_counts(m: Message) -> Counter[str]:
    c = m.extra.get(COUNTS_KEY)
    return Counter({str(k): int(v) for k, v in c.items() if isinstance(v, int)}) if isinstance(
        c, Mapping) else Counter()


def _field_counts(s: Session) -> Counter[str]:
    c = s.extra.get(FIELDS_KEY)
    return Counter({str(k): int(v) for k, v in c.items() if isinstance(v, int)}) if isinstance(
        c, Mapping) else Counter()


def session_total(messages_total: Counter[str], s: Session) -> dict[str, int]:
    total = messages_total + _field_counts(s)
    return {k: v for k, v in sorted(total.items()) if v > 0}


def read_allowlist(paths: Iterable[Path]) -> list[str]:
    """Lines of the allowlist files: one regex (or literal, if not a valid regex) per line;
    blank lines and lines starting with ``#`` are ignored."""
    out: list[str] = []
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return out


_CACHE: dict[tuple[Any, ...], Redactor] = {}


def redactor_for(ctx: Any) -> Redactor | None:
    """The repository's redactor (``None`` when ``git config oxide.redact`` is false)."""
    if not ctx.config_bool("oxide.redact", True):
        return None
    paths = [ctx.repo.workdir / ALLOWLIST_FILE, ctx.repo.oxide_dir / "allowlist"]
    key = tuple((str(p), p.stat().st_mtime_ns if p.exists() else None) for p in paths)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = Redactor(read_allowlist(paths))
    return _CACHE[key]


def redact_message(message: Message, redactor: Redactor | None = None) -> tuple[Message, dict[str, int]]:
    """The message redacted with the default rules (or ``redactor``) and its hits per kind."""
    m, counts = (redactor or _default()).message(message)
    return m, dict(sorted(counts.items()))


def redact_session(session: Session, messages: Iterable[Message], redactor: Redactor | None = None
                   ) -> tuple[Session, list[Message]]:
    """A whole session redacted; ``session.redactions`` = the sum over its messages and fields."""
    r = redactor or _default()
    out, total = [], Counter[str]()
    for m in messages:
        m2, _ = r.message(m)
        total += message_counts(m2)
        out.append(m2)
    s = r.session(session)
    return replace(s, redactions=session_total(total, s)), out


_DEFAULT: list[Redactor] = []


def _default() -> Redactor:
    if not _DEFAULT:
        _DEFAULT.append(Redactor())
    return _DEFAULT[0]


def for_write(ctx: Any, log: logread.Tip | None, session: Session, puts: Mapping[int, Message],
              truncate_at: int | None = None) -> tuple[Session, dict[int, Message], dict[int, bytes]]:
    """Redact what ``store`` is about to write on the log ``log`` (None: a new session), and
    encode it (the gate reads the encoded bytes: see ``secretgate``).

    Each message keeps its own hits in ``extra["redactions"]``; the session's ``redactions`` is the
    sum over the messages stored after this write plus its own fields' hits. It is kept up to date
    incrementally (the stored total, minus the messages this write replaces or drops, plus the new
    ones), so writing the same messages again never counts them twice and costs O(written).
    """
    r = redactor_for(ctx)
    out: dict[int, Message] = {}
    blobs: dict[int, bytes] = {}
    new: Counter[str] = Counter()
    for q, m in puts.items():
        out[q], blobs[q] = r.encoded(m) if r else (m, codec.encode_message(m))
        new += message_counts(out[q])
    return session_for_write(ctx, log, session, new, out, truncate_at, r), out, blobs


def session_for_write(ctx: Any, log: logread.Tip | None, session: Session, new: Counter[str],
                      seqs: Iterable[int], truncate_at: int | None, r: Redactor | None) -> Session:
    """The session as written with messages at ``seqs`` whose redaction counts sum to ``new``: its
    own fields redacted, its ``redactions`` the stored total, minus the messages replaced or
    dropped, plus the new ones."""
    from oxide_git.store import logread

    total: Counter[str] = Counter()
    if log is not None:
        total = Counter(dict(log.session.redactions)) - _field_counts(log.session)
        gone = {q for q in seqs if q < log.count}
        if truncate_at is not None:
            gone.update(range(truncate_at, log.count))
        for _q, old in logread.blobs_at(ctx.repo.objects, log.tree, sorted(gone)):
            if b"redactions" in old:
                total -= message_counts(codec.decode_message(old))
    total += new
    s = r.session(session) if r else session
    return replace(s, redactions=session_total(total, s))
