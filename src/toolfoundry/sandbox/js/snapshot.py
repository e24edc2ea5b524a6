"""Bake an initialised guest's linear memory into a new wasm module (the Wizer technique).

Instantiating the baked module gives a pristine, fully initialised QuickJS (prelude included)
without running any code: wasmtime maps the memory image copy-on-write, so a fresh instance
costs about as much as an empty one and only the pages a call touches are ever copied.
"""

from __future__ import annotations

MEMORY_SECTION = 5
DATA_SECTION = 11
DATA_COUNT_SECTION = 12
_MERGE_GAP = 64  # zero runs shorter than this stay inside a segment


def _leb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte if done else byte | 0x80)
        if done:
            return bytes(out)


def _read_leb(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, pos


def _segments(image: bytes, base: int) -> list[tuple[int, bytes]]:
    """Non-zero runs of ``image`` (which starts at address ``base``), small gaps merged."""
    segments: list[tuple[int, bytes]] = []
    pos, end = 0, len(image)
    while pos < end:
        while pos < end and image[pos] == 0:
            pos += 1
        if pos >= end:
            break
        start = pos
        zeros = 0
        while pos < end and zeros < _MERGE_GAP:
            zeros = zeros + 1 if image[pos] == 0 else 0
            pos += 1
        stop = pos - zeros
        segments.append((base + start, image[start:stop]))
    return segments


def _section(section_id: int, body: bytes) -> bytes:
    return bytes([section_id]) + _leb(len(body)) + body


def bake(wasm: bytes, image: bytes, base: int, pages: int) -> bytes:
    """Return ``wasm`` with its data replaced by ``image`` (placed at ``base``).

    The memory's minimum grows to ``pages``; every other section is kept as is. The module must
    have one memory without a maximum, and its only mutable state outside memory must be the
    stack pointer, which is back at its initial value whenever the guest is idle.
    """
    if wasm[:8] != b"\0asm\x01\0\0\0":
        raise ValueError("not a wasm module")
    segments = _segments(image, base)
    data_body = bytearray(_leb(len(segments)))
    for offset, chunk in segments:
        data_body += b"\x00\x41" + _sleb(offset) + b"\x0b" + _leb(len(chunk)) + chunk
    out = bytearray(wasm[:8])
    pos = 8
    while pos < len(wasm):
        section_id = wasm[pos]
        size, body_start = _read_leb(wasm, pos + 1)
        body = wasm[body_start : body_start + size]
        pos = body_start + size
        if section_id == MEMORY_SECTION:
            count, p = _read_leb(body, 0)
            if count != 1 or body[p] != 0:
                raise ValueError("expected one memory without a maximum")
            out += _section(MEMORY_SECTION, _leb(1) + b"\x00" + _leb(pages))
        elif section_id == DATA_COUNT_SECTION:
            out += _section(DATA_COUNT_SECTION, _leb(len(segments)))
        elif section_id == DATA_SECTION:
            out += _section(DATA_SECTION, bytes(data_body))
        else:
            out += wasm[body_start - len(_leb(size)) - 1 : pos]
    return bytes(out)
