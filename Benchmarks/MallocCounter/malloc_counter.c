// Counts heap allocations of the benchmark process, for `workflow-bench`'s allocation figures.
//
// Not part of the package build. Build it and preload it (see docs/BENCHMARKS.md):
//   cc -O2 -shared -fPIC -o /tmp/libwfmalloc.so Benchmarks/MallocCounter/malloc_counter.c
//   LD_PRELOAD=/tmp/libwfmalloc.so .build/release/workflow-bench local
// The benchmark looks `wf_malloc_count` up with dlsym and prints the allocation rows only when
// it is there. Every entry point that makes a new block counts once; glibc does the work.
#define _GNU_SOURCE
#include <stddef.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations;

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *pointer, size_t size) { count(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return 12; /* ENOMEM */
    *out = pointer;
    return 0;
}

unsigned long wf_malloc_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }
