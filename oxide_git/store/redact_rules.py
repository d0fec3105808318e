"""The secrets redaction looks for, as data: one ``Rule`` per kind (what it looks like, the literal
hints one of which it always contains, the check its hit must pass), the dict keys whose values are
secrets, and the checks that tell a generated secret from a word or a placeholder (``entropy``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from oxide_git.store.secretgate import PASSWORD_TAIL, SECRET_TAIL, URL_TAIL

# Names whose values are secrets: in `NAME=value`, `NAME: value`, `"name": "value"` and dict keys.
_PASSWORD_WORD = r"(?:passw(?:or)?d|passphrase|pwd)"
_SECRET_WORD = r"(?:secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|credential)"
_VALUE = r"""(?P<secret>[^\s"'`,;()\[\]{}<>]{%d,})(?=$|[\s"'`,;)\]}])"""
_ASSIGN = r"""%s[A-Za-z0-9_.-]*["']?\s*(?:=|:=|:)\s*["']?"""
_PLACEHOLDER = re.compile(
    r"^(?i:[$<%{*]|\[REDACTED|x{4,}|null$|none$|true$|false$|undefined$|example|\.\.\.)"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[A-Z][A-Z0-9_]*$")


def entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


# lowercase words joined by underscores: an enum value (Copilot's ``"tokenAccountingBasis":
# "local_full_context_estimate"``), never a generated secret
_SNAKE_WORDS = re.compile(r"^[a-z]+(?:_[a-z]+)+$")


def high_entropy(s: str) -> bool:
    """Looks random: long enough, mixed, and at least 3 bits of entropy per character."""
    if len(s) < 12 or _PLACEHOLDER.match(s) or _SNAKE_WORDS.match(s):
        return False
    has_digit = any(c.isdigit() for c in s)
    has_alpha = any(c.isalpha() for c in s)
    return has_alpha and (has_digit or len(s) >= 24) and entropy(s) >= 3.0


def mixed(s: str) -> bool:
    """Letters and digits both present (tells a key from an English word with a prefix)."""
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def not_placeholder(s: str) -> bool:
    return not _PLACEHOLDER.match(s)


# Literals that _PASSWORD_WORD / _SECRET_WORD (lowercased) always contain.
PASSWORD_HINTS = ("passw", "passp", "pwd")
SECRET_HINTS = ("secret", "token", "credential",
                 *(f"{w}{sep}key" for w in ("api", "access", "private", "auth") for sep in ("", "_", "-")))

_W = "A-Za-z0-9_-"  # characters that may not precede a token (it would be part of a longer word)


@dataclass(frozen=True)
class Rule:
    """``regex`` finds a hit (its ``secret`` group, or the whole match, is replaced); ``check`` must
    accept the replaced text; ``before``: characters that may not precede the match; ``hints``:
    lowercase literals one of which must occur in the lowercased string; ``lower``: the regex is
    lowercase too and runs on the lowercased string; ``tail``: what must follow a hint for the rule
    to have a chance (``secretgate``; None: the hint alone).
    """

    kind: str
    regex: str
    hints: tuple[str, ...]
    check: Callable[[str], bool] | None = None
    lower: bool = False
    before: str = ""
    tail: str | None = None


RULES: tuple[Rule, ...] = (
    Rule("private_key", r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9]*"
         r"PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)", ("-----begin",)),
    Rule("url_credentials", r"://(?P<secret>[^\s:/@\[\]]+:[^\s/@\[\]]+)@(?=[A-Za-z0-9.\[-])", ("://",),
         tail=URL_TAIL),
    Rule("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-",), before=_W),
    Rule("openai_key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",), mixed, before=_W),
    Rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", ("aiza",), before=_W),
    Rule("aws_access_key_id", r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])", ("akia", "asia"), before=_W),
    Rule("aws_secret_access_key", r"aws[a-z0-9_.-]*secret[a-z0-9_.-]*[\"']?\s*(?:=|:)\s*[\"']?"
         r"(?P<secret>[a-z0-9/+]{40})(?![a-z0-9/+])", ("aws",), lower=True, tail=SECRET_TAIL),
    Rule("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
         ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), before=_W),
    Rule("gitlab_token", r"glpat-[A-Za-z0-9_-]{20,}", ("glpat-",), before=_W),
    Rule("slack_token", r"xox[abprs]-[A-Za-z0-9-]{10,}", ("xox",), before=_W),
    Rule("stripe_key", r"[sr]k_live_[A-Za-z0-9]{16,}", ("_live_",), before=_W),
    Rule("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyj",), before=_W),
    Rule("bearer_token", r"bearer\s+(?P<secret>[a-z0-9._~+/-]{16,}=*)", ("bearer",), high_entropy,
         lower=True, before=_W),
    Rule("password", _ASSIGN % _PASSWORD_WORD + _VALUE % 4, PASSWORD_HINTS, not_placeholder,
         lower=True, tail=PASSWORD_TAIL),
    Rule("secret", _ASSIGN % _SECRET_WORD + _VALUE % 8, SECRET_HINTS, high_entropy, lower=True,
         tail=SECRET_TAIL),
)

# Rule.before -> its characters, as a set (the rules name them as regex ranges)
NOT_BEFORE = {_W: frozenset(_W.replace("A-Z", "ABCDEFGHIJKLMNOPQRSTUVWXYZ").replace(
    "a-z", "abcdefghijklmnopqrstuvwxyz").replace("0-9", "0123456789"))}

# A dict entry whose key names a secret is judged like an assignment of that name.
KEY_RULES = ((re.compile(rf"[A-Za-z0-9_.-]*{_PASSWORD_WORD}[A-Za-z0-9_.-]*", re.I), "password",
              not_placeholder, 4),
             (re.compile(rf"[A-Za-z0-9_.-]*{_SECRET_WORD}[A-Za-z0-9_.-]*", re.I), "secret", high_entropy, 8))
