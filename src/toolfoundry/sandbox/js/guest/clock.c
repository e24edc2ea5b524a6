/*
 * toolfoundry guest clock: time without a host crossing per read.
 *
 * The host writes two numbers into tf_clock: the wall clock at the call's start (whole ms) and
 * the time elapsed since then, which its epoch ticker advances in whole milliseconds while the
 * call runs. Reading the time is a load from linear memory. guest.c points QuickJS's
 * Date.now() (gettimeofday) and performance.now() (CLOCK_MONOTONIC) here, and time() and clock()
 * are replaced too, so the guest imports no WASI clock at all. Resolution: 1 ms; the wall clock is monotone within a
 * call (start + elapsed); the monotonic clock counts from the call's start.
 */
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#define NS_PER_S 1000000000ull

static volatile struct {
    uint64_t wall_start_ns; /* CLOCK_REALTIME at the call's start, written before it runs */
    uint64_t elapsed_ns;    /* since the call's start; only the host's ticker changes it */
} tf_clock;

__attribute__((export_name("tf_clock"))) volatile void *tf_clock_address(void) {
    return &tf_clock;
}

static uint64_t tf_now_ns(int wall) {
    uint64_t elapsed = tf_clock.elapsed_ns;
    return wall ? tf_clock.wall_start_ns + elapsed : elapsed;
}

int tf_clock_gettime(clockid_t id, struct timespec *ts) {
    uint64_t now = tf_now_ns(id == CLOCK_REALTIME);
    ts->tv_sec = (time_t)(now / NS_PER_S);
    ts->tv_nsec = (long)(now % NS_PER_S);
    return 0;
}

int tf_gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    uint64_t now = tf_now_ns(1);
    tv->tv_sec = (time_t)(now / NS_PER_S);
    tv->tv_usec = (suseconds_t)(now % NS_PER_S / 1000);
    return 0;
}

time_t time(time_t *out) {
    time_t now = (time_t)(tf_now_ns(1) / NS_PER_S);
    if (out)
        *out = now;
    return now;
}

clock_t clock(void) { return (clock_t)(tf_now_ns(0) / (NS_PER_S / CLOCKS_PER_SEC)); }
