/*
 * Native stress test of the guest allocator (src/toolfoundry/sandbox/js/guest/alloc.c).
 *
 * Built for 32-bit x86 (the allocator's layout assumes 32-bit pointers, as on wasm32), with
 * linear memory played by a static arena: memory.size / memory.grow become functions over it,
 * and the cap is a page count. Random malloc / calloc / realloc / aligned_alloc / free churn;
 * every live block keeps a fill pattern that is checked before it is touched again, and the
 * heap is walked now and then (sizes, flags, footers, no two free neighbours, the free lists'
 * total). Then, under a cap, 1 MiB blocks must fill the whole space. Prints "ok ..." or aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_PAGES 4096u /* 256 MiB of pretend linear memory */
static unsigned char arena[ARENA_PAGES * 65536u] __attribute__((aligned(65536)));
static unsigned pages_now = 1, page_cap = ARENA_PAGES;

static size_t fake_memory_size(int memory) {
    (void)memory;
    return (uintptr_t)arena / 65536u + pages_now;
}

static size_t fake_memory_grow(int memory, size_t pages) {
    (void)memory;
    if (pages_now + pages > page_cap)
        return (size_t)-1;
    size_t old = fake_memory_size(0);
    pages_now += (unsigned)pages;
    return old;
}

#define TFA_HEAP_BASE ((uintptr_t)arena + 100)
#define __builtin_wasm_memory_size fake_memory_size
#define __builtin_wasm_memory_grow fake_memory_grow
/* the allocator's public names, kept apart from this program's own libc */
#define malloc tfa_test_malloc
#define free tfa_test_free
#define calloc tfa_test_calloc
#define realloc tfa_test_realloc
#define reallocarray tfa_test_reallocarray
#define malloc_usable_size tfa_test_usable
#define aligned_alloc tfa_test_aligned_alloc
#define memalign tfa_test_memalign
#define valloc tfa_test_valloc
#define posix_memalign tfa_test_posix_memalign
#define export_name(name) used
#include "alloc.c"

static void fail(const char *what) {
    printf("FAIL: %s\n", what);
    abort();
}

static void check_heap(void) {
    uintptr_t start = (TFA_HEAP_BASE + 15) & ~(uintptr_t)15;
    tfa_block *b = (tfa_block *)(start + 8);
    int prev_free = 0;
    uint32_t free_bytes = 0;
    while ((uintptr_t)b != tfa_end - 8) {
        uint32_t size = tfa_size(b);
        if (size < TFA_MIN_BLOCK || size % 16)
            fail("block size");
        if (((b->size & TFA_PREV_FREE) != 0) != prev_free)
            fail("previous-free flag");
        if (tfa_is_free(b)) {
            if (prev_free)
                fail("two free neighbours");
            if (tfa_next(b)->prev_size != size)
                fail("footer");
            free_bytes += size;
        }
        prev_free = tfa_is_free(b);
        b = tfa_next(b);
    }
    if (((b->size & TFA_PREV_FREE) != 0) != prev_free)
        fail("sentinel flag");
    if (free_bytes != tf_heap_free())
        fail("free lists disagree with the heap");
}

#define SLOTS 4000
static unsigned char *ptrs[SLOTS];
static size_t sizes[SLOTS];
static unsigned char tags[SLOTS];
static unsigned seed = 12345;

static unsigned rnd(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

static size_t random_size(void) {
    unsigned r = rnd() % 100;
    if (r < 60)
        return rnd() % 600;
    if (r < 90)
        return rnd() % 8192;
    if (r < 98)
        return rnd() % 300000;
    return rnd() % 3000000;
}

static void fill(int i, unsigned char *p, size_t n) {
    ptrs[i] = p;
    sizes[i] = n;
    tags[i] = (unsigned char)rnd();
    memset(p, tags[i], n);
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 300000;
    for (long round = 0; round < rounds; round++) {
        int i = (int)(rnd() % SLOTS);
        unsigned op = rnd() % 10;
        for (size_t k = 0; ptrs[i] && k < sizes[i]; k++)
            if (ptrs[i][k] != tags[i])
                fail("a live block changed");
        if (op < 4) {
            tfa_test_free(ptrs[i]);
            ptrs[i] = NULL;
        } else if (op < 7) {
            size_t n = random_size(), had = ptrs[i] ? sizes[i] : 0;
            unsigned char *p = tfa_test_realloc(ptrs[i], n);
            if (n == 0) {
                if (!ptrs[i])
                    tfa_test_free(p); /* realloc(NULL, 0) is malloc(0) */
                ptrs[i] = NULL;
            } else if (p) {
                if ((uintptr_t)p % 16)
                    fail("realloc alignment");
                if (n > had)
                    memset(p + had, tags[i], n - had);
                ptrs[i] = p;
                sizes[i] = n;
            }
        } else if (op < 8) {
            tfa_test_free(ptrs[i]);
            ptrs[i] = NULL;
            size_t alignment = (size_t)16 << (rnd() % 10), n = random_size();
            unsigned char *p = tfa_test_aligned_alloc(alignment, n);
            if (p) {
                if ((uintptr_t)p % alignment)
                    fail("aligned_alloc alignment");
                fill(i, p, n);
            }
        } else {
            tfa_test_free(ptrs[i]);
            ptrs[i] = NULL;
            size_t n = random_size();
            unsigned char *p = op == 8 ? tfa_test_calloc(1, n) : tfa_test_malloc(n);
            if (p) {
                for (size_t k = 0; op == 8 && k < n; k++)
                    if (p[k])
                        fail("calloc left a byte set");
                if (tfa_test_usable(p) < n || (uintptr_t)p % 16)
                    fail("usable size or alignment");
                fill(i, p, n);
            }
        }
        if (round % 5000 == 0)
            check_heap();
    }
    check_heap();
    for (int i = 0; i < SLOTS; i++)
        tfa_test_free(ptrs[i]);
    check_heap();
    uint32_t heap = (uint32_t)(tfa_end - TFA_HEAP_BASE), left = tf_heap_free();
    if (heap - left > 4096)
        fail("freeing everything did not give the heap back");
    /* under a cap 64 MiB above the heap, 1 MiB blocks must take nearly all the room */
    page_cap = pages_now + 1024;
    unsigned room_mib = (tf_heap_free() + 1024u * 65536u) >> 20, blocks = 0;
    while (tfa_test_malloc(1 << 20))
        blocks++;
    check_heap();
    if (blocks + 1 < room_mib)
        fail("1 MiB blocks did not fill the room under the cap");
    printf("ok %ld rounds, %u of %u MiB as 1 MiB blocks\n", rounds, blocks, room_mib);
    return 0;
}
