"""base/lru.SizedLRU: the one bounded cache (entries and bytes) behind every process-wide cache."""

from __future__ import annotations

import threading

from toolfoundry.base.lru import SizedLRU, text_cost


def by_length(key: str, value: str) -> int:
    return len(key) + len(value)


def test_least_recently_used_goes_first_when_entries_are_full() -> None:
    cache: SizedLRU[str, str] = SizedLRU(2, 10_000, by_length)
    cache.put("a", "1")
    cache.put("b", "2")
    assert cache.get("a") == "1"  # now b is the least recently used
    cache.put("c", "3")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("1", None, "3")
    assert len(cache) == 2


def test_bytes_bound_what_is_kept_and_an_oversized_entry_is_not_kept() -> None:
    cache: SizedLRU[str, str] = SizedLRU(1000, 1000, by_length)
    for i in range(50):
        cache.put(f"k{i:02d}", "x" * 97)
        assert cache.size <= 1000
    assert len(cache) == 10  # 100 bytes each, the newest kept
    assert cache.get("k49") is not None
    assert cache.get("k00") is None
    assert cache.put("huge", "x" * 5000) == "x" * 5000  # returned, not kept
    assert cache.get("huge") is None
    assert len(cache) == 10


def test_replacing_a_key_counts_its_bytes_once() -> None:
    cache: SizedLRU[str, str] = SizedLRU(10, 1000, by_length)
    for _ in range(20):
        cache.put("k", "x" * 99)
    assert (len(cache), cache.size) == (1, 100)
    assert cache.pop("k") == "x" * 99
    assert (len(cache), cache.size) == (0, 0)


def test_get_or_make_makes_once_and_threads_keep_the_bound() -> None:
    made: list[int] = []
    cache: SizedLRU[int, str] = SizedLRU(64, 64 * 100, lambda k, v: text_cost(v, overhead=0))

    def making(text: str) -> str:
        made.append(1)
        return text

    def work(offset: int) -> None:
        for i in range(500):
            cache.get_or_make((i + offset) % 200, lambda: making("y" * 100))
            assert cache.size <= 64 * 100

    threads = [threading.Thread(target=work, args=(n * 7,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) <= 64
    assert cache.size == 100 * len(cache)
    before = len(made)
    key = next(k for k in range(200) if cache.get(k) is not None)
    cache.get_or_make(key, lambda: making("z"))
    assert len(made) == before  # a kept key is not made again
