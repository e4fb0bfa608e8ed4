#!/usr/bin/env python3
"""Cuts PM4 streams (zinc-rt --dump-pm4 output) at packet boundaries into pieces of at most
1 KiB, the PM4 fuzz targets' -max_len, so that every part of an IB seeds them, not only its
first ops. Usage: split_pm4.py OUT_DIR FILE.pm4..."""
import pathlib
import struct
import sys

MAX_BYTES = 1024


def packet_dwords(header):
    if header >> 30 == 2:  # type-2 filler
        return 1
    count = (header >> 16) & 0x3FFF
    opcode = (header >> 8) & 0xFF
    return 1 if opcode == 0x10 and count == 0x3FFF else count + 2  # header-only NOP


def main():
    out = pathlib.Path(sys.argv[1])
    for name in sys.argv[2:]:
        path = pathlib.Path(name)
        data = path.read_bytes()
        words = struct.unpack(f'<{len(data) // 4}I', data[:len(data) // 4 * 4])
        pieces, start, at = [], 0, 0
        while at < len(words):
            size = packet_dwords(words[at])
            if (at + size - start) * 4 > MAX_BYTES and at > start:
                pieces.append(words[start:at])
                start = at
            at += size
        pieces.append(words[start:])
        for i, piece in enumerate(p for p in pieces if p):
            (out / f'{path.stem}-{i}.pm4').write_bytes(struct.pack(f'<{len(piece)}I', *piece))


main()
