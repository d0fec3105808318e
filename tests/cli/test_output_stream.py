"""`stream_document` writes in chunks with json's C encoder: the text must be what one
JSONEncoder gives, whatever the chunk boundaries."""

from __future__ import annotations

import json

import pytest

from oxide_git.cli import output


def _expected(head: dict[str, object], items: list[dict[str, object]], **fields: object) -> str:
    enc = json.JSONEncoder(ensure_ascii=False, default=str).encode
    body = ",\n".join(enc(d) for d in items)
    extra = "".join(f', "{k}": {enc(v)}' for k, v in fields.items())
    return f'{{"session": {enc(head)}{extra}, "messages": [\n{body}\n]}}\n' if items else \
        f'{{"session": {enc(head)}{extra}, "messages": [\n]}}\n'


@pytest.mark.parametrize("chunk", [1, 40, 1 << 18])
@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_chunked_stream_is_the_plain_encoding(
    n: int, chunk: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(output, "_CHUNK", chunk)
    head = {"id": "s", "title": "ünïcode \"quoted\"", "n": None}
    items = [{"seq": i, "text": f"é {i}\n", "x": [1.5, True, {"k": object}]} for i in range(n)]
    output.stream_document(head, iter(items), checkpoint={"id": "c"})
    text = capsys.readouterr().out
    assert text == _expected(head, items, checkpoint={"id": "c"})
    assert len(json.loads(text)["messages"]) == n
