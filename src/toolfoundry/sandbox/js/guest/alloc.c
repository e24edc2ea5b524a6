/*
 * toolfoundry guest allocator: malloc and friends for the QuickJS guest.
 *
 * Why our own: the libc that ziglang links for wasm32-wasi rounds every block up to a power of
 * two (plus a 16-byte header), so a 1 MiB buffer took 2 MiB of linear memory and a tool got
 * about half its memory cap. This one is a two-level segregated fit (the TLSF scheme): free
 * blocks sit in lists by size class (16 sub-classes per power of two), a bitmap finds a fitting
 * list in constant time, a block is split to the exact size asked for, and free neighbours are
 * merged at once. A used block costs 4 bytes of header; blocks are 16-byte aligned. Memory comes
 * from memory.grow, a little ahead of need but never past what the request needs when the
 * store's cap refuses more. Single-threaded, like the guest. QuickJS serves its small objects
 * from 4 KiB arenas it takes from here, so most requests are 4 KiB or large.
 *
 * Block layout (b is a block's address, b % 16 == 8):
 *   b + 0   the previous block's size, valid only while that block is free (its footer)
 *   b + 4   this block's size (a multiple of 16, header included) | FREE | PREV_FREE
 *   b + 8   the payload (16-byte aligned); in a free block, the next and previous free blocks
 * The block's extent is [b + 4, b + 4 + size): the next block's footer word is the last word of
 * this block's payload, written only while this block is free. The heap ends with a 0-size used
 * sentinel block whose header sits in the last 8 bytes of memory.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TFA_ALIGN 16u
#define TFA_OVERHEAD 4u
#define TFA_MIN_BLOCK 16u
#define TFA_FREE 1u
#define TFA_PREV_FREE 2u
#define TFA_FLAGS 15u
#define TFA_WASM_PAGE 65536u
#define TFA_SL_LOG2 4
#define TFA_SL_COUNT (1u << TFA_SL_LOG2)
#define TFA_SMALL (TFA_SL_COUNT * TFA_ALIGN) /* below this, one list per 16 bytes */
#define TFA_SMALL_LOG2 8
#define TFA_FL_COUNT 25 /* classes up to 2^32 */
#define TFA_MAX_REQUEST 0x7ff00000u
#define TFA_GROW_AHEAD (512u * 1024u) /* grow at least this much when the cap allows */
#define TFA_SCAN 64                   /* blocks looked at in the exact class before growing */

typedef struct tfa_block {
    uint32_t prev_size;
    uint32_t size;
    struct tfa_block *next_free;
    struct tfa_block *prev_free;
} tfa_block;

#ifndef TFA_HEAP_BASE /* a native test harness supplies its own */
extern unsigned char __heap_base;
#define TFA_HEAP_BASE ((uintptr_t)&__heap_base)
#endif

static uint32_t tfa_fl_map;
static uint32_t tfa_sl_map[TFA_FL_COUNT];
static tfa_block *tfa_heads[TFA_FL_COUNT][TFA_SL_COUNT];
static uintptr_t tfa_end; /* end of the heap: memory.size, 0 before the first call */

static inline uint32_t tfa_size(const tfa_block *b) { return b->size & ~TFA_FLAGS; }
static inline int tfa_is_free(const tfa_block *b) { return b->size & TFA_FREE; }
static inline tfa_block *tfa_next(tfa_block *b) { return (tfa_block *)((char *)b + tfa_size(b)); }
static inline void *tfa_payload(tfa_block *b) { return (char *)b + 8; }
static inline tfa_block *tfa_of(void *p) { return (tfa_block *)((char *)p - 8); }
static inline uint32_t tfa_log2(uint32_t x) { return 31u - (uint32_t)__builtin_clz(x); }

/* The size class (fl, sl) that a block of `size` bytes is filed under. */
static inline void tfa_class(uint32_t size, uint32_t *fl, uint32_t *sl) {
    if (size < TFA_SMALL) {
        *fl = 0;
        *sl = size / TFA_ALIGN;
    } else {
        uint32_t f = tfa_log2(size);
        *fl = f - (TFA_SMALL_LOG2 - 1);
        *sl = (size >> (f - TFA_SL_LOG2)) ^ TFA_SL_COUNT;
    }
}

static void tfa_unlink(tfa_block *b) {
    uint32_t fl, sl;
    tfa_class(tfa_size(b), &fl, &sl);
    if (b->prev_free)
        b->prev_free->next_free = b->next_free;
    else
        tfa_heads[fl][sl] = b->next_free;
    if (b->next_free)
        b->next_free->prev_free = b->prev_free;
    if (!tfa_heads[fl][sl]) {
        tfa_sl_map[fl] &= ~(1u << sl);
        if (!tfa_sl_map[fl])
            tfa_fl_map &= ~(1u << fl);
    }
}

static void tfa_link(tfa_block *b) {
    uint32_t fl, sl;
    tfa_class(tfa_size(b), &fl, &sl);
    b->prev_free = NULL;
    b->next_free = tfa_heads[fl][sl];
    if (b->next_free)
        b->next_free->prev_free = b;
    tfa_heads[fl][sl] = b;
    tfa_sl_map[fl] |= 1u << sl;
    tfa_fl_map |= 1u << fl;
}

/* Mark `b` (size `size`, flags kept from its header) free, write its footer and tell its
 * successor; the caller has merged any free neighbours. */
static void tfa_make_free(tfa_block *b, uint32_t size) {
    b->size = size | (b->size & TFA_PREV_FREE) | TFA_FREE;
    tfa_block *n = tfa_next(b);
    n->prev_size = size;
    n->size |= TFA_PREV_FREE;
    tfa_link(b);
}

/* Free `b` of `size` bytes, merging it with free neighbours. */
static void tfa_release(tfa_block *b, uint32_t size) {
    tfa_block *n = (tfa_block *)((char *)b + size);
    if (tfa_is_free(n)) {
        tfa_unlink(n);
        size += tfa_size(n);
    }
    if (b->size & TFA_PREV_FREE) {
        tfa_block *p = (tfa_block *)((char *)b - b->prev_size);
        tfa_unlink(p);
        size += tfa_size(p);
        b = p;
    }
    tfa_make_free(b, size);
}

/* Keep the first `size` bytes of used block `b`; give the rest back when it makes a block. */
static void tfa_trim(tfa_block *b, uint32_t size) {
    uint32_t have = tfa_size(b);
    if (have - size < TFA_MIN_BLOCK)
        return;
    b->size = size | (b->size & TFA_PREV_FREE);
    tfa_block *rest = (tfa_block *)((char *)b + size);
    rest->size = 0; /* used, previous used: tfa_release sets the flags */
    tfa_release(rest, have - size);
}

/* Mark free block `b` used (it is already unlinked) and cut it to `size`. */
static void *tfa_take(tfa_block *b, uint32_t size) {
    b->size &= ~TFA_FREE;
    tfa_next(b)->size &= ~TFA_PREV_FREE;
    tfa_trim(b, size);
    return tfa_payload(b);
}

static void tfa_init(void) {
    uintptr_t start = (TFA_HEAP_BASE + TFA_ALIGN - 1) & ~(uintptr_t)(TFA_ALIGN - 1);
    tfa_block *first = (tfa_block *)(start + 8);
    tfa_end = (uintptr_t)__builtin_wasm_memory_size(0) * TFA_WASM_PAGE;
    if (tfa_end < start + 64) { /* no room after the static data: take one page for the heap */
        if ((intptr_t)__builtin_wasm_memory_grow(0, 1) < 0)
            __builtin_trap();
        tfa_end += TFA_WASM_PAGE;
    }
    tfa_block *sentinel = (tfa_block *)(tfa_end - 8);
    sentinel->size = 0;
    if ((uintptr_t)sentinel - (uintptr_t)first >= TFA_MIN_BLOCK) {
        first->size = 0;
        tfa_make_free(first, (uint32_t)((uintptr_t)sentinel - (uintptr_t)first));
    }
}

/* How many times memory.grow was refused (the store's memory cap) or a request was larger
 * than any memory: the host reads it after a call (guest.c's tf_facts) to decide, from its own
 * cap rather than from an error object a script can forge, that a call ran out of memory. */
uint32_t tf_grow_refusals;

/* Ask memory.grow for at least `bytes` more; 0 when refused. Adds the new space (merged with a
 * free last block) to the free lists. */
static int tfa_grow(uint32_t bytes) {
    uint32_t pages = (bytes + TFA_WASM_PAGE - 1) / TFA_WASM_PAGE;
    uint32_t ahead = (TFA_GROW_AHEAD + TFA_WASM_PAGE - 1) / TFA_WASM_PAGE;
    intptr_t old = (intptr_t)__builtin_wasm_memory_grow(0, pages < ahead ? ahead : pages);
    if (old < 0 && pages < ahead)
        old = (intptr_t)__builtin_wasm_memory_grow(0, pages);
    if (old < 0) {
        tf_grow_refusals++;
        return 0;
    }
    uintptr_t start = (uintptr_t)old * TFA_WASM_PAGE;
    uintptr_t end = (uintptr_t)__builtin_wasm_memory_size(0) * TFA_WASM_PAGE;
    tfa_block *b;
    if (start == tfa_end) {
        b = (tfa_block *)(tfa_end - 8); /* the old sentinel becomes the new block */
    } else {
        /* someone else grew memory in between: a separate region, fenced by the old sentinel */
        b = (tfa_block *)(start + 8);
        b->size = 0;
    }
    tfa_end = end;
    tfa_block *sentinel = (tfa_block *)(end - 8);
    sentinel->size = 0;
    tfa_release(b, (uint32_t)((uintptr_t)sentinel - (uintptr_t)b));
    return 1;
}

/* The free block to carve `size` bytes from, unlinked; NULL when none fits. */
static tfa_block *tfa_find(uint32_t size) {
    uint32_t fl, sl, want = size;
    if (size >= TFA_SMALL)
        want += (1u << (tfa_log2(size) - TFA_SL_LOG2)) - 1; /* any block in the class fits */
    tfa_class(want, &fl, &sl);
    if (fl < TFA_FL_COUNT) {
        uint32_t sl_map = tfa_sl_map[fl] & (~0u << sl);
        if (!sl_map) {
            uint32_t fl_map = fl + 1 < 32 ? tfa_fl_map & (~0u << (fl + 1)) : 0;
            if (fl_map) {
                fl = (uint32_t)__builtin_ctz(fl_map);
                sl_map = tfa_sl_map[fl];
            }
        }
        if (sl_map) {
            tfa_block *b = tfa_heads[fl][__builtin_ctz(sl_map)];
            tfa_unlink(b);
            return b;
        }
    }
    /* The lists above hold only blocks surely big enough; the request's own class may still
     * have one that fits (a same-size block freed earlier): look before growing. */
    tfa_class(size, &fl, &sl);
    int looked = 0;
    for (tfa_block *b = tfa_heads[fl][sl]; b && looked < TFA_SCAN; b = b->next_free, looked++) {
        if (tfa_size(b) >= size) {
            tfa_unlink(b);
            return b;
        }
    }
    return NULL;
}

static inline uint32_t tfa_block_size(size_t n) {
    uint32_t size = (uint32_t)((n + TFA_OVERHEAD + TFA_ALIGN - 1) & ~(size_t)(TFA_ALIGN - 1));
    return size < TFA_MIN_BLOCK ? TFA_MIN_BLOCK : size;
}

/* Space growing must add for `size` bytes: less when the heap ends in a free block. */
static uint32_t tfa_shortfall(uint32_t size) {
    tfa_block *sentinel = (tfa_block *)(tfa_end - 8);
    uint32_t tail = (sentinel->size & TFA_PREV_FREE) ? sentinel->prev_size : 0;
    return size > tail ? size - tail : TFA_MIN_BLOCK;
}

void *malloc(size_t n) {
    if (!tfa_end)
        tfa_init();
    if (n > TFA_MAX_REQUEST) {
        tf_grow_refusals++;
        errno = ENOMEM;
        return NULL;
    }
    uint32_t size = tfa_block_size(n);
    tfa_block *b = tfa_find(size);
    if (!b && tfa_grow(tfa_shortfall(size)))
        b = tfa_find(size);
    if (!b && tfa_grow(size)) /* the new space was not contiguous with the free tail */
        b = tfa_find(size);
    if (!b) {
        errno = ENOMEM;
        return NULL;
    }
    return tfa_take(b, size);
}

void free(void *p) {
    if (!p)
        return;
    tfa_block *b = tfa_of(p);
    tfa_release(b, tfa_size(b));
}

void *calloc(size_t count, size_t size) {
    size_t n;
    if (__builtin_mul_overflow(count, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = malloc(n);
    if (p)
        memset(p, 0, n);
    return p;
}

/* Grow used block `b` in place to `size` bytes when its successor is free (growing memory when
 * that successor ends the heap); 1 on success. */
static int tfa_extend(tfa_block *b, uint32_t size) {
    uint32_t have = tfa_size(b);
    tfa_block *n = tfa_next(b);
    if ((uintptr_t)n == tfa_end - 8 ||
        (tfa_is_free(n) && (uintptr_t)tfa_next(n) == tfa_end - 8 && have + tfa_size(n) < size)) {
        /* b (or b and a free tail) ends the heap: grow memory under it */
        if (!tfa_grow(tfa_shortfall(size - have)))
            return 0;
        n = tfa_next(b);
    }
    if (!tfa_is_free(n) || have + tfa_size(n) < size)
        return 0;
    tfa_unlink(n);
    b->size = (have + tfa_size(n)) | (b->size & TFA_PREV_FREE);
    tfa_next(b)->size &= ~TFA_PREV_FREE;
    tfa_trim(b, size);
    return 1;
}

void *realloc(void *p, size_t n) {
    if (!p)
        return malloc(n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    if (n > TFA_MAX_REQUEST) {
        tf_grow_refusals++;
        errno = ENOMEM;
        return NULL;
    }
    tfa_block *b = tfa_of(p);
    uint32_t size = tfa_block_size(n), have = tfa_size(b);
    if (size <= have) {
        tfa_trim(b, size);
        return p;
    }
    if (tfa_extend(b, size))
        return p;
    void *q = malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, have - TFA_OVERHEAD);
    free(p);
    return q;
}

void *reallocarray(void *p, size_t count, size_t size) {
    size_t n;
    if (__builtin_mul_overflow(count, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

size_t malloc_usable_size(void *p) { return p ? tfa_size(tfa_of(p)) - TFA_OVERHEAD : 0; }

void *aligned_alloc(size_t alignment, size_t n) {
    if (alignment <= TFA_ALIGN)
        return malloc(n);
    if (alignment & (alignment - 1) || n > TFA_MAX_REQUEST || alignment > TFA_MAX_REQUEST / 2) {
        errno = EINVAL;
        return NULL;
    }
    /* room for a free block in front of the aligned payload, then give that front back */
    char *p = malloc(n + alignment + TFA_MIN_BLOCK);
    if (!p)
        return NULL;
    uintptr_t aligned = ((uintptr_t)p + TFA_MIN_BLOCK + alignment - 1) & ~(uintptr_t)(alignment - 1);
    tfa_block *b = tfa_of(p), *a = tfa_of((void *)aligned);
    uint32_t gap = (uint32_t)(aligned - (uintptr_t)p), total = tfa_size(b);
    a->size = total - gap; /* used; its predecessor (the front) is freed below */
    b->size = gap | (b->size & TFA_PREV_FREE);
    tfa_release(b, gap);
    tfa_trim(a, tfa_block_size(n));
    return (void *)aligned;
}

void *memalign(size_t alignment, size_t n) { return aligned_alloc(alignment, n); }
void *valloc(size_t n) { return aligned_alloc(TFA_WASM_PAGE, n); }

int posix_memalign(void **out, size_t alignment, size_t n) {
    if (alignment < sizeof(void *) || alignment & (alignment - 1))
        return EINVAL;
    void *p = aligned_alloc(alignment, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

/* Bytes free in the heap (for the host: the snapshot's spare room is the tool's, not baseline). */
__attribute__((export_name("tf_heap_free"))) uint32_t tf_heap_free(void) {
    uint32_t total = 0;
    for (int fl = 0; fl < TFA_FL_COUNT; fl++)
        for (int sl = 0; sl < (int)TFA_SL_COUNT; sl++)
            for (tfa_block *b = tfa_heads[fl][sl]; b; b = b->next_free)
                total += tfa_size(b);
    return total;
}
