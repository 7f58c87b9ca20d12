"""The .npy files the report modules hand to the posenc CLI and read back from it (NumPy format 1.0 / 2.0, little
endian, C order; Python's standard library only: the report needs no NumPy)."""
from __future__ import annotations

import ast
import math
import struct


def write_npy(path: str, rows: list, descr: str = "<f8") -> None:
    """`rows` (a list of equal rows of numbers) as a .npy of shape (len(rows), len(rows[0])) and dtype descr
    ('<f8' or '<f4'), NumPy format 1.0."""
    if descr not in ("<f8", "<f4"):
        raise ValueError(f"descr {descr!r}: accepted '<f8' or '<f4'")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, len(rows), len(rows[0]))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(rows) * len(rows[0]), "d" if descr == "<f8" else "f"),
                            *[float(v) for r in rows for v in r]))


def read_npy(data: bytes) -> tuple:
    """(shape, values) of a little-endian float64 or float32 .npy in C order (NumPy format 1.0 or 2.0); ValueError
    otherwise."""
    if data[:6] != b"\x93NUMPY" or data[6] not in (1, 2):
        raise ValueError("not a .npy of format 1.0 or 2.0")
    size, start = (struct.unpack("<H", data[8:10])[0], 10) if data[6] == 1 else (struct.unpack("<I", data[8:12])[0], 12)
    try:
        header = ast.literal_eval(data[start:start + size].decode("latin1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], tuple(header["shape"])
    except (SyntaxError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"unreadable header: {e}") from None
    if descr not in ("<f8", "<f4") or fortran:
        raise ValueError(f"expected '<f8' or '<f4' in C order, got {descr!r}" + (" (Fortran order)" if fortran else ""))
    count = math.prod(shape)
    width = 8 if descr == "<f8" else 4
    body = data[start + size:]
    if len(body) != count * width:
        raise ValueError(f"{len(body)} bytes of data for shape {shape}")
    return shape, struct.unpack(f"<{count}{'d' if width == 8 else 'f'}", body)

