"""Request bodies: JSON texts and near-JSON bytes where orjson and ``json.loads`` could disagree.

``json_bodies()`` draws a document written token by token (numbers of every length, integers
around and beyond 64 bits, exponents that overflow a double, string escapes with lone and paired
surrogates, the NaN and Infinity tokens ``json.loads`` accepts, duplicate keys, whitespace of
RFC 8259 and outside it), encoded as UTF-8 or as the other encodings ``json.loads`` detects
(with and without a byte order mark), and now and then damaged (cut short, a byte replaced,
data after the document, invalid UTF-8). ``HOSTILE_BODIES`` lists one body of each kind.
"""

from __future__ import annotations

from hypothesis import strategies as st

#: Whitespace between tokens: RFC 8259's four characters (``_SPACE``), or also others.
_SPACE = st.sampled_from(["", "", "", " ", "\n", "\t", "\r\n  "])
_ANY_SPACE = _SPACE | st.sampled_from(["\x0c", "\x0b", "\u00a0", "\u2028", "\x00", "\ufeff"])

_DIGITS = st.text("0123456789", min_size=1, max_size=25)
_CONSTANTS = st.sampled_from(["true", "false", "null"])
_ANY_CONSTANTS = _CONSTANTS | st.sampled_from(["NaN", "Infinity", "-Infinity", "nan"])
_INTEGERS = st.sampled_from(
    [2**53, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**19, 10**30]
).map(str) | st.integers().map(str)


@st.composite
def _numbers(draw: st.DrawFn) -> str:
    """A number token: sign, digits (a leading zero now and then), fraction, exponent."""
    sign = draw(st.sampled_from(["", "", "-"]))
    whole = draw(_DIGITS.map(lambda d: d.lstrip("0") or "0") | _DIGITS)
    fraction = draw(st.none() | _DIGITS)
    exponent = draw(st.none() | st.tuples(st.sampled_from("eE"), st.sampled_from(["", "+", "-"])))
    digits = draw(st.text("0123456789", min_size=1, max_size=4))
    text = sign + whole + ("" if fraction is None else "." + fraction)
    return text if exponent is None else text + "".join(exponent) + digits


_ESCAPES = st.sampled_from(["\\u00e9", "\\ud83d\\ude00", "\\n", "\\u0000", '\\"', "\\/"])
_ANY_ESCAPES = st.sampled_from(
    [
        '\\"',
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\n",
        "\\r",
        "\\t",
        "\\u0000",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud800",
        "\\udfff",
        "\\udc00\\ud800",
        "\\ud800x",
        "\\uD834\\uDD1E",
        "\\x",
        "\\u12",
    ]
)


def _strings(escapes: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """String tokens: characters of any plane and ``escapes``."""
    parts = st.lists(st.text(max_size=6).map(_escape_quotes) | escapes, max_size=4)
    return parts.map(lambda p: '"' + "".join(p) + '"')


def _escape_quotes(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _texts(*, hostile: bool) -> st.SearchStrategy[str]:
    """JSON texts, or with ``hostile`` also near-JSON ones (NaN, lone surrogates, odd spaces)."""
    space = _ANY_SPACE if hostile else _SPACE
    strings = _strings(_ANY_ESCAPES if hostile else _ESCAPES)
    keys = st.sampled_from(['"a"', '"b"', '"a"', '""', '"\\u0061"']) | strings
    scalars = _numbers() | _INTEGERS | (_ANY_CONSTANTS if hostile else _CONSTANTS) | strings

    def document(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        arrays = st.lists(st.tuples(space, children, space), max_size=20).map(
            lambda items: "[" + ",".join(a + v + b for a, v, b in items) + "]"
        )
        objects = st.lists(st.tuples(keys, space, children), max_size=20).map(
            lambda items: "{" + ",".join(f"{k}:{s}{v}" for k, s, v in items) + "}"
        )
        return arrays | objects

    return st.tuples(space, st.recursive(scalars, document, max_leaves=40), space).map("".join)


_TEXTS = _texts(hostile=False)
_HOSTILE_TEXTS = _texts(hostile=True)
_ENCODINGS = ["utf-8"] * 6 + ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32",
                              "utf-32-be"]  # fmt: skip


@st.composite
def json_bodies(draw: st.DrawFn) -> bytes:
    """A body: a JSON text as UTF-8 (half of them), or a near-JSON one, encoded, maybe damaged."""
    if draw(st.booleans()):
        return draw(_TEXTS).encode("utf-8", "surrogatepass")
    text = draw(_HOSTILE_TEXTS)
    body = text.encode(draw(st.sampled_from(_ENCODINGS)), "surrogatepass")
    damage = draw(st.sampled_from(["none"] * 6 + ["cut", "byte", "trailing", "invalid utf-8"]))
    if damage == "cut" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif damage == "byte" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([draw(st.integers(0, 255))]) + body[at + 1 :]
    elif damage == "trailing":
        body += draw(st.sampled_from([b" 1", b"x", b"]", b"{}", b"\x00", b" \n"]))
    elif damage == "invalid utf-8":
        body += draw(st.sampled_from([b'"\xff"', b'"\xc0\x80"', b'"\xed\xa0\x80"', b"\xf4\x90"]))
    return body


#: One body of each kind where a naive orjson parse differs from ``json.loads``, by name.
HOSTILE_BODIES: dict[str, bytes] = {
    "NaN": b'{"x": NaN}',
    "Infinity": b"[Infinity, -Infinity]",
    "integer beyond u64": b"18446744073709551616",
    "integer below i64": b"[-9223372036854775809]",
    "integer of 30 digits": b'{"id": 123456789012345678901234567890}',
    "u64 max": b"18446744073709551615",
    "exponent beyond a double": b"1e400",
    "negative exponent beyond a double": b"[1e-400, -1e-400]",
    "lone high surrogate": b'"\\ud800"',
    "lone low surrogate key": b'{"\\udc00": 1}',
    "reversed surrogates": b'"\\udc00\\ud800"',
    "surrogate pair": b'"\\ud83d\\ude00"',
    "UTF-8 byte order mark": b'\xef\xbb\xbf{"a": 1}',
    "UTF-16 LE with byte order mark": '{"a": [1, "é"]}'.encode("utf-16"),
    "UTF-16 BE": '{"a": 1}'.encode("utf-16-be"),
    "UTF-32": "[true]".encode("utf-32"),
    "UTF-32 BE": "[true]".encode("utf-32-be"),
    "invalid UTF-8": b'{"a": "\xff"}',
    "overlong UTF-8": b'"\xc0\x80"',
    "encoded surrogate": b'"\xed\xa0\x80"',
    "trailing data": b'{"a": 1} 2',
    "trailing comma": b"[1, 2,]",
    "duplicate keys": b'{"a": 1, "b": 2, "a": 3}',
    "minus zero": b"[-0, -0.0, 0.0]",
    "big float": b"[1.7976931348623157e308, 123456789012345678901234567890.5]",
    "long fraction": b"0.1000000000000000055511151231257827021181583404541015625",
    "subnormal": b"[4.9e-324, 2.4703282292062328e-324, 2.2250738585072011e-308]",
    "form feed": b"\x0c[1]",
    "no-break space": b"[1,\xc2\xa02]",
    "RFC whitespace": b"\t\r\n [ 1 ,\n 2 ] \r\n",
    # Long lists are looked at whole, in C, by the kind of their first item.
    "integer beyond u64 after 16 integers": b"[" + b"1," * 16 + b"18446744073709551616]",
    "integer beyond u64 in a list after 16 strings": (
        b"[" + b'"a",' * 16 + b"[18446744073709551616]]"
    ),
    "integer beyond u64 after 16 strings and null": (
        b"[" + b'"a",null,' * 8 + b"18446744073709551616]"
    ),
    "control character in a string": b'"a\x1fb"',
    "NUL byte": b'"\x00"',
    "empty": b"",
    "only whitespace": b"   ",
    "leading zero": b"01",
    "truncated": b'{"a": [1, 2',
    "integer beyond Python's digit limit": b"1" * 5000,
    # Lists and dicts of 16 items or more are looked at in C (sum, math.hypot), not item by item.
    "integer beyond u64 after a long list of ints": b"[" + b"7," * 20 + b"18446744073709551616]",
    "integer below i64 among long floats": b"[" + b"-0.5," * 20 + b"-9223372036854775809]",
    "integer beyond u64 among long strings": b'["' + b'x", "' * 20 + b'", 18446744073709551616]',
    "integer beyond u64 in a long dict": b"{"
    + b"".join(b'"k%d": %d, ' % (i, i) for i in range(20))
    + b'"z": 18446744073709551616}',
    "long list of u64 integers": b"[" + b"18446744073709551615," * 20 + b"0]",
    "long list of big floats": b"[" + b"1e300," * 20 + b"1.5]",
    "long list of ints, floats and booleans": b"[" + b"1, 2.5, true, " * 8 + b"false]",
    "nested lists inside a long list": b"[" + b"1," * 20 + b"[[[2.5]], [3]]]",
    "integer beyond u64 nested after long strings": b'["'
    + b'a", "' * 20
    + b'", [[18446744073709551616]]]',
    "integer beyond u64 among long nulls": b"[" + b"null, " * 20 + b"18446744073709551616]",
    "long list of strings and nulls": b"[" + b'"a", null, ' * 10 + b'"b"]',
}
