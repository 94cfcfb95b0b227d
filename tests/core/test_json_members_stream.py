"""iter_json_members: a JSON file's members read a chunk at a time are the members read from the
whole text (the same keys, values, errors, notes, lines and file problems), however the chunks
cut the file; and what is held while reading is a window, not the file."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vidbench.core.errors import DataError
from vidbench.core.files import JsonMember, iter_json_members, json_members

# How the existing tests break a file, each at a place in it: (what is replaced, by what)
BREAKS = {
    "comma inside": (', "', ' "'),
    "comma between": ("},", "}"),
    "bracket left open": ("}", ""),
    "bad literal": ("true", "tru"),
    "bad number": ("12", "1.e"),
    "not UTF-8": ('"Q', '"Q\udcff'),  # written back as the byte 0xff (surrogateescape)
    "lone surrogate escape": ('"Q', '"Q\\ud800'),
    "surrogate pair escape": ('"Q', '"Q\\ud83d\\ude00'),
    "stray bracket": (", ", ", }, "),
    "quote left open": ('Q"', "Q"),
}
CHUNK_SIZES = (1, 2, 7, 64)

records = st.lists(
    st.sampled_from([12, -3.5e2, 1.5e30, True, None, "s"])  # a number may go on in the next chunk
    | st.fixed_dictionaries(
        {
            # one longer than the lookahead: a string left open must not be decided early
            "Question": st.sampled_from(["Q?", "Qé?", 'Q \\ " x', "Q" + "é" * 40]),
            "Options": st.lists(st.sampled_from(["(A) 1", "(B) 2", "c"]), max_size=4),
            "Answer index": st.sampled_from([1, 12, -3, 2.5e3]),
            "flag": st.sampled_from([True, False, None]),
        }
    ),
    max_size=6,
)


@st.composite
def json_files(draw: st.DrawFn) -> bytes:
    """A file of records, as an object or a list, indented or compact, then broken in up to two
    places (or not), and maybe cut short, given text after its end, or a BOM."""
    values = draw(records)
    data: object = (
        {f"{i:04x}_q": v for i, v in enumerate(values)} if draw(st.booleans()) else values
    )
    text = json.dumps(data, indent=draw(st.sampled_from([None, 2, 4])), ensure_ascii=False)
    for name in draw(st.lists(st.sampled_from(sorted(BREAKS)), max_size=2)):
        old, new = BREAKS[name]
        places = [i for i in range(len(text)) if text.startswith(old, i)]
        if places:
            at = draw(st.sampled_from(places))
            text = text[:at] + new + text[at + len(old) :]
    raw = text.encode("utf-8", errors="surrogateescape")
    end = draw(st.sampled_from(["whole", "cut", "trailing text", "trailing space", "BOM"]))
    if end == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif end == "trailing text":
        raw += b"\n} x"
    elif end == "trailing space":
        raw += b" \n\t "
    elif end == "BOM":
        raw = b"\xef\xbb\xbf" + raw
    return raw


def _read(path: Path, chunk_size: int) -> tuple[type, list[JsonMember], list[str]] | str:
    try:
        stream = iter_json_members(path, chunk_size)
        return stream.kind, list(stream.members), stream.problems
    except DataError as e:
        return str(e)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=json_files())
def test_chunks_read_what_the_whole_text_reads(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "records.json"
    path.write_bytes(raw)
    whole = _read(path, len(raw) + 1)  # one read holds the whole text
    for chunk_size in CHUNK_SIZES:
        assert _read(path, chunk_size) == whole, chunk_size


def test_the_broken_records_are_named_in_every_chunking(tmp_path: Path) -> None:
    """The comparison above is not between two empty readings: a file broken in each way gives
    its errors and notes, with the file's lines, however it is cut."""
    text = json.dumps({f"{i}_q": {"Question": "Q", "n": [1, 2]} for i in range(4)}, indent=2)
    text = text.replace('"Q",\n    "n"', '"Q"\n    "n"', 1)  # a comma missing in record 1
    text = text.replace('  },\n  "2_q"', '  }\n  "2_q"')  # and between records 2 and 3
    path = tmp_path / "records.json"
    for chunk_size, bom in [(1, b"\xef\xbb\xbf"), *((size, b"") for size in CHUNK_SIZES)]:
        path.write_bytes(bom + text.encode() + b" x")
        stream = iter_json_members(path, chunk_size)
        read = [(m.index, m.line, m.key, m.error, m.note) for m in stream.members]
        assert read == [
            (1, 2, "0_q", "malformed JSON at line 4, column 5: Expecting ',' delimiter", None),
            (2, 9, "1_q", None, None),
            (3, 16, "2_q", None, "a ',' is missing before this record (line 16, column 3); "
             "read as if there"),
            (4, 23, "3_q", None, None),
        ], chunk_size  # fmt: skip
        assert stream.problems == ["text after the records' closing '}' (line 30, column 2)"]


def test_a_stray_closing_bracket_is_a_broken_record(tmp_path: Path) -> None:
    """A '}' where a list's record should be is that record's text (it once stopped the walk
    in place, reading forever)."""
    path = tmp_path / "records.json"
    path.write_text("[1, }, 2]")
    read = json_members(path)
    assert [(m.value, m.error) for m in read.members] == [
        (1, None),
        (None, "malformed JSON at line 1, column 5: Expecting value"),
        (2, None),
    ]


def test_reading_holds_a_window_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text(json.dumps({f"{i:08x}_q": {"Question": "Q" * 40} for i in range(20_000)}))
    size = path.stat().st_size  # about 1.3 MB
    tracemalloc.start()
    try:
        stream = iter_json_members(path, chunk_size=1 << 14)
        count = sum(1 for member in stream.members if member.error is None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000 and stream.problems == []
    assert peak < size / 8, (peak, size)
