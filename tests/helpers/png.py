"""Reading a PNG screenshot's pixels, enough to tell a painted page from a blank one."""

from __future__ import annotations

import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
"""The eight bytes every PNG file starts with."""


def png_rows(data: bytes) -> tuple[int, list[bytes]]:
    """Bytes per pixel and the unfiltered pixel rows of an 8-bit RGB(A) PNG (spec 7 to 9)."""
    pos, idat = len(PNG_SIGNATURE), []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat.append(body)
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp, raw = 3 if colour == 2 else 4, zlib.decompress(b"".join(idat))
    stride, rows, above = width * bpp, [], bytearray(width * bpp)
    low = int.from_bytes(b"\x7f" * stride, "big")
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 :][:stride])
        if kind == 2:  # Up, most rows: add the row above bytewise, on whole rows as big ints
            x, a = int.from_bytes(line, "big"), int.from_bytes(above, "big")
            line = bytearray((((x & low) + (a & low)) ^ ((x ^ a) & ~low)).to_bytes(stride, "big"))
        for i in range(stride) if kind in (1, 3, 4) else ():  # Sub, Average, Paeth
            left = line[i - bpp] if i >= bpp else 0
            up, corner = above[i], above[i - bpp] if i >= bpp else 0
            if kind == 1:
                predicted = left
            elif kind == 3:
                predicted = (left + up) // 2
            else:  # the nearest of the three to left + up - corner; ties in that order
                guess = left + up - corner
                predicted = min((abs(guess - left), 0, left), (abs(guess - up), 1, up),
                                (abs(guess - corner), 2, corner))[2]  # fmt: skip
            line[i] = (line[i] + predicted) % 256
        rows.append(bytes(line))
        above = line
    return bpp, rows
