"""Which pages of a mapping hold data of their own: the kernel's ``PAGEMAP_SCAN`` (Linux 6.7+).

A guest's linear memory is a private mapping: the snapshot's image (a file wasmtime made, mapped
copy-on-write) and zero pages around it. A page a call wrote became an anonymous page of this
process; every other page is still the image's or zero. :meth:`PageScan.owned` asks the kernel
for the anonymous pages of a range, present or swapped out, in one ``ioctl``; putting the
pristine bytes back into exactly those pages makes the memory the image again
(``instances.MemoryReset``). This is how wasmtime itself resets a pooled slot when it may use
``PAGEMAP_SCAN``, which wasmtime-py 50's C API gives no way to turn on.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import struct
import threading

PAGE = mmap.PAGESIZE

# <linux/fs.h>: struct pm_scan_arg (12 u64), struct page_region (3 u64), the categories
_ARG = struct.Struct("<12Q")
_WALK_END = struct.Struct("<Q")  # at byte 32 of the argument, after the kernel's answer
# what changes from scan to scan: start, end, walk_end (zeroed), at byte 16 of the argument;
# max_pages at byte 56
_RANGE = struct.Struct("<3Q")
_MAX_PAGES = struct.Struct("<Q")
_PAGEMAP_SCAN = (3 << 30) | (_ARG.size << 16) | (ord("f") << 8) | 16  # _IOWR('f', 16, ...)
_PRESENT, _SWAPPED, _FILE, _PFNZERO = 1 << 3, 1 << 4, 1 << 2, 1 << 5
_REGION = 3  # u64 words per page_region: start, end, categories


class PageScan:
    """Scans of this process's own page tables; ``available`` is False where the kernel (or
    the platform) has no ``PAGEMAP_SCAN``, and then nothing may rely on it."""

    def __init__(self, max_regions: int = 256) -> None:
        # One answer buffer, so one scan at a time: the ioctl drops the GIL, and two threads
        # restoring at once (concurrent calls, or a code-mode call and its inner calls) would
        # read each other's regions and copy pages over the wrong addresses.
        self._lock = threading.Lock()
        self._regions = (ctypes.c_uint64 * (_REGION * max_regions))()
        self._words = memoryview(self._regions).cast("B").cast("Q")
        self._max_regions = max_regions
        # the argument, packed once; a scan writes only its range and page bound (under the lock)
        self._arg = bytearray(
            _ARG.pack(
                _ARG.size,
                0,  # flags
                0,  # start
                0,  # end
                0,  # walk_end, written by the kernel
                ctypes.addressof(self._regions),
                max_regions,
                0,  # max_pages
                _FILE | _PFNZERO,  # category_inverted: these must be absent ...
                _FILE | _PFNZERO,  # category_mask: ... (every bit here must match)
                _PRESENT | _SWAPPED,  # category_anyof_mask: in memory or swapped out
                0,  # return_mask
            )
        )
        self._fd: int | None = None
        try:
            self._fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
            probe = mmap.mmap(-1, 2 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            probe[PAGE : PAGE + 1] = b"x"  # one anonymous page: the scan must find just it
            cell = ctypes.c_char.from_buffer(probe)
            found = self.owned(ctypes.addressof(cell), 2 * PAGE, 1)
            del cell
            probe.close()
            self.available = found == [(PAGE, PAGE)]
        except (OSError, ValueError, BufferError):
            self.available = False

    def owned(self, start: int, length: int, max_pages: int) -> list[tuple[int, int]] | None:
        """The anonymous pages of ``[start, start + length)`` as ``(offset, length)`` ranges,
        or None when there are more than ``max_pages`` of them, more ranges than this scan
        holds, or the scan failed: then the range's state is not known."""
        if self._fd is None:
            return None
        end = start + length
        arg = self._arg
        with self._lock:
            _RANGE.pack_into(arg, 16, start, end, 0)
            _MAX_PAGES.pack_into(arg, 56, max_pages + 1)  # one more, so "too many" is seen
            try:
                count = fcntl.ioctl(self._fd, _PAGEMAP_SCAN, arg)
            except OSError:
                return None
            if _WALK_END.unpack_from(arg, 32)[0] < end:  # walk_end: the scan stopped early
                return None  # the regions or max_pages ran out
            words = self._words[: _REGION * count].tolist()
        firsts, lasts = words[0::_REGION], words[1::_REGION]
        if sum(lasts) - sum(firsts) > max_pages * PAGE:
            return None
        return [(first - start, last - first) for first, last in zip(firsts, lasts, strict=True)]


class PristineMemory:
    """A fresh instance's linear memory, kept to put a used instance's memory back to it.

    The pristine bytes are read in place from the memory of an instance that never runs
    (``address``, ``size``: it owns no page, so every page is still the image's or zero; its
    owner keeps it alive and idle). :meth:`restore` copies them over every page a used
    instance owns (a page it wrote, found by :class:`PageScan`); every other page is still the
    image's or zero, so afterwards the memory equals a fresh instance's byte for byte. It
    refuses (False) when the memory grew, when more than ``max_pages`` pages would need
    copying, or when the scan is not sure: the caller then drops the instance instead.
    """

    def __init__(self, address: int, size: int, scan: PageScan, max_pages: int) -> None:
        self.size = size
        self._address = address
        self._image = _bytes_at(address, size)
        self._scan = scan
        self._max_pages = max_pages

    def untouched(self) -> bool:
        """True when the source instance owns no page: its memory is the image."""
        return self._scan.owned(self._address, self.size, 0) == []

    def restore(self, base: int, size: int) -> bool:
        """Put the memory at ``base`` (``size`` bytes now) back to the pristine bytes."""
        if size != self.size:
            return False
        ranges = self._scan.owned(base, size, self._max_pages)
        if ranges is None:
            return False
        # slice assignment copies in C: a third the cost of a ctypes.memmove call per range,
        # which also gives up and takes back the GIL each time
        memory, image = _bytes_at(base, size), self._image
        for offset, length in ranges:
            memory[offset : offset + length] = image[offset : offset + length]
        return True


def _bytes_at(address: int, size: int) -> memoryview:
    """The ``size`` bytes at ``address`` as a writable view (no copy)."""
    return memoryview((ctypes.c_char * size).from_address(address)).cast("B")
