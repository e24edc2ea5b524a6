/*
 * toolfoundry guest: a thin shim over QuickJS-NG, built as a WASI reactor.
 *
 * The host initialises one instance (runtime, context, polyfills, prelude), snapshots its
 * linear memory, and restores that image into a fresh instance for every tool call. The only
 * non-WASI imports are tf.host_call / tf.host_take: every capability goes through them.
 *
 * quickjs.c is included (one translation unit) so the shim can reseed the context's PRNG
 * per call without patching upstream sources, and so QuickJS reads the time from clock.c
 * (tf_clock_gettime, tf_gettimeofday: memory the host writes) instead of libc's clock, which
 * would cross into the host on every Date.now().
 */
#include <sys/time.h>
#include <time.h>
int tf_clock_gettime(clockid_t id, struct timespec *ts);
int tf_gettimeofday(struct timeval *restrict tv, void *restrict tz);
#define clock_gettime tf_clock_gettime
#define gettimeofday tf_gettimeofday
#include "quickjs.c"
#undef clock_gettime
#undef gettimeofday

#define TF_SCRATCH (64 * 1024)

__attribute__((import_module("tf"), import_name("host_call"))) int32_t
tf_host_call(const char *op, int32_t op_len, const char *in, int32_t in_len, char *out,
             int32_t out_cap);
__attribute__((import_module("tf"), import_name("host_take"))) void tf_host_take(char *out);

static JSRuntime *tf_rt;
static JSContext *tf_ctx;
static JSValue tf_hooks = JS_UNDEFINED; /* the prelude's {invoke, fail, tick} */
static char *tf_scratch;
static char *tf_result;

/* Facts the host reads after a call, written only by this C code, never by JavaScript: how
 * often memory.grow was refused (alloc.c) and whether the call ended because its promise never
 * settled (1) or a timer lies past the budget (2). The host sets error kinds from these. */
extern uint32_t tf_grow_refusals;
static volatile uint32_t tf_end_state;
__attribute__((export_name("tf_grow_refused"))) uint32_t tf_grow_refused(void) {
    return tf_grow_refusals;
}
__attribute__((export_name("tf_ended_by"))) uint32_t tf_ended_by(void) { return tf_end_state; }

static const char TF_OOM[] =
    "{\"ok\":false,\"kind\":\"memory_limit\",\"message\":\"out of memory\"}";

/* Where the host writes a call's code and args when they fit: no allocation crossing needed. */
#define TF_INBOX (256 * 1024)
static char tf_inbox_buf[TF_INBOX];
__attribute__((export_name("tf_inbox"))) char *tf_inbox(void) { return tf_inbox_buf; }
__attribute__((export_name("tf_inbox_size"))) uint32_t tf_inbox_size(void) { return TF_INBOX; }

__attribute__((export_name("tf_alloc"))) void *tf_alloc(size_t n) { return malloc(n); }
__attribute__((export_name("tf_free"))) void tf_free(void *p) { free(p); }

/* __host(op, payload) -> string: the one native function the prelude captures. A Uint8Array
 * payload crosses as its bytes, read in place from its buffer (binary ops: crypto's data), and
 * its answer comes back as an ArrayBuffer; a string payload crosses as UTF-8 and its answer
 * comes back as a string. */
static JSValue tf_js_host(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t op_len, in_len;
    const char *op, *in;
    int32_t n;
    int binary;
    JSValue ret;
    if (argc < 2)
        return JS_ThrowTypeError(ctx, "host: two arguments expected");
    binary = JS_GetClassID(argv[1]) == JS_CLASS_UINT8_ARRAY;
    op = JS_ToCStringLen(ctx, &op_len, argv[0]);
    if (!op)
        return JS_EXCEPTION;
    in = binary ? (const char *)JS_GetUint8Array(ctx, &in_len, argv[1])
                : JS_ToCStringLen(ctx, &in_len, argv[1]);
    if (!in) {
        JS_FreeCString(ctx, op);
        return JS_EXCEPTION;
    }
    n = tf_host_call(op, (int32_t)op_len, in, (int32_t)in_len, tf_scratch, TF_SCRATCH);
    JS_FreeCString(ctx, op);
    if (!binary)
        JS_FreeCString(ctx, in);
    if (n < 0)
        return JS_ThrowTypeError(ctx, "host: call refused");
    if (n <= TF_SCRATCH)
        return binary ? JS_NewArrayBufferCopy(ctx, (const uint8_t *)tf_scratch, (size_t)n)
                      : JS_NewStringLen(ctx, tf_scratch, (size_t)n);
    char *big = js_malloc(ctx, (size_t)n);
    if (!big)
        return JS_EXCEPTION;
    tf_host_take(big);
    ret = binary ? JS_NewArrayBufferCopy(ctx, (const uint8_t *)big, (size_t)n)
                 : JS_NewStringLen(ctx, big, (size_t)n);
    js_free(ctx, big);
    return ret;
}

static char *tf_normalize(JSContext *ctx, const char *base, const char *name, void *opaque) {
    return js_strdup(ctx, name); /* the host decides what a name may be */
}

/* Hand the compiled bytecode of a library to the host, which caches it for later calls. */
static void tf_offer_bytecode(JSContext *ctx, const char *name, JSValueConst fn) {
    size_t size, name_len = strlen(name);
    uint8_t *code = JS_WriteObject(ctx, &size, fn, JS_WRITE_OBJ_BYTECODE);
    if (!code)
        return;
    char *payload = js_malloc(ctx, name_len + 1 + size);
    if (payload) {
        memcpy(payload, name, name_len + 1);
        memcpy(payload + name_len + 1, code, size);
        tf_host_call("bytecode", 8, payload, (int32_t)(name_len + 1 + size), tf_scratch, 0);
        js_free(ctx, payload);
    }
    js_free(ctx, code);
}

/* The host answers "!message" (refused), "S" + source, or "B" + bytecode it cached earlier. */
static JSModuleDef *tf_load(JSContext *ctx, const char *name, void *opaque) {
    /* one byte kept free: QuickJS wants the source NUL-terminated */
    int32_t n =
        tf_host_call("import", 6, name, (int32_t)strlen(name), tf_scratch, TF_SCRATCH - 1);
    char *src = tf_scratch;
    JSModuleDef *m = NULL;
    JSValue fn;
    if (n < 1) {
        JS_ThrowTypeError(ctx, "import refused");
        return NULL;
    }
    if (n > TF_SCRATCH - 1) {
        src = js_malloc(ctx, (size_t)n + 1);
        if (!src)
            return NULL;
        tf_host_take(src);
    }
    src[n] = '\0';
    if (src[0] == '!') {
        /* built by hand: JS_ThrowTypeError cuts messages at 256 bytes */
        JSValue err = JS_NewObjectProtoClass(ctx, ctx->native_error_proto[JS_TYPE_ERROR],
                                             JS_CLASS_ERROR);
        JS_DefinePropertyValueStr(ctx, err, "message", JS_NewStringLen(ctx, src + 1, n - 1),
                                  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
        JS_Throw(ctx, err);
    } else if (src[0] == 'B') {
        fn = JS_ReadObject(ctx, (const uint8_t *)src + 1, (size_t)n - 1, JS_READ_OBJ_BYTECODE);
        if (!JS_IsException(fn)) {
            m = JS_VALUE_GET_PTR(fn);
            JS_FreeValue(ctx, fn);
        }
    } else {
        fn = JS_Eval(ctx, src + 1, (size_t)n - 1, name,
                     JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
        if (!JS_IsException(fn)) {
            tf_offer_bytecode(ctx, name, fn);
            m = JS_VALUE_GET_PTR(fn);
            JS_FreeValue(ctx, fn);
        }
    }
    if (src != tf_scratch)
        js_free(ctx, src);
    return m;
}

__attribute__((export_name("tf_init"))) int tf_init(uint32_t stack_limit) {
    tf_rt = JS_NewRuntime();
    if (!tf_rt)
        return -1;
    JS_SetMaxStackSize(tf_rt, stack_limit);
    tf_ctx = JS_NewContext(tf_rt);
    if (!tf_ctx)
        return -2;
    JS_AddIntrinsicBigInt(tf_ctx);
    JS_SetModuleLoaderFunc(tf_rt, tf_normalize, tf_load, NULL);
    tf_scratch = malloc(TF_SCRATCH);
    if (!tf_scratch)
        return -3;
    JSValue global = JS_GetGlobalObject(tf_ctx);
    JS_SetPropertyStr(tf_ctx, global, "__host", JS_NewCFunction(tf_ctx, tf_js_host, "__host", 2));
    JS_FreeValue(tf_ctx, global);
    return 0;
}

static char *tf_describe_exception(void) {
    JSValue exc = JS_GetException(tf_ctx);
    const char *s = JS_ToCString(tf_ctx, exc);
    char *out = strdup(s ? s : "unknown exception");
    if (s)
        JS_FreeCString(tf_ctx, s);
    JS_FreeValue(tf_ctx, exc);
    return out;
}

/* Evaluate a classic script in the global scope; with keep, its completion value becomes the
 * hooks object. Returns NULL on success, else a malloc'd message. */
__attribute__((export_name("tf_eval_script"))) char *tf_eval_script(const char *src, size_t len,
                                                                    int keep) {
    JSValue v = JS_Eval(tf_ctx, src, len, "<prelude>", JS_EVAL_TYPE_GLOBAL);
    if (JS_IsException(v))
        return tf_describe_exception();
    if (keep) {
        JS_FreeValue(tf_ctx, tf_hooks);
        tf_hooks = v;
    } else {
        JS_FreeValue(tf_ctx, v);
    }
    return NULL;
}

static JSValue tf_hook(const char *name) { return JS_GetPropertyStr(tf_ctx, tf_hooks, name); }

/* Run queued jobs and virtual timers until the promise settles. 0 settled, 1 never settles,
 * 2 a timer lies beyond the budget. */
static int tf_pump(JSValueConst promise, double budget_ms) {
    JSValue tick = tf_hook("tick");
    JSValue arg = JS_NewFloat64(tf_ctx, budget_ms);
    int state = 1;
    for (;;) {
        for (;;) {
            JSContext *c;
            int r = JS_ExecutePendingJob(tf_rt, &c);
            if (r == 0)
                break;
            if (r < 0)
                JS_FreeValue(tf_ctx, JS_GetException(tf_ctx));
        }
        if (JS_PromiseState(tf_ctx, promise) != JS_PROMISE_PENDING) {
            state = 0;
            break;
        }
        JSValue r = JS_Call(tf_ctx, tick, JS_UNDEFINED, 1, &arg);
        int32_t code = 0;
        if (JS_IsException(r))
            JS_FreeValue(tf_ctx, JS_GetException(tf_ctx));
        else
            JS_ToInt32(tf_ctx, &code, r);
        JS_FreeValue(tf_ctx, r);
        if (code == 0) {
            state = 1;
            break;
        }
        if (code == 2) {
            state = 2;
            break;
        }
    }
    JS_FreeValue(tf_ctx, tick);
    return state;
}

static uint64_t tf_pack(const char *s, size_t len) {
    return ((uint64_t)(uintptr_t)s << 32) | (uint64_t)len;
}

static uint64_t tf_finish(JSValue json) {
    size_t len;
    const char *s;
    free(tf_result);
    tf_result = NULL;
    if (JS_IsException(json)) {
        JS_FreeValue(tf_ctx, JS_GetException(tf_ctx));
        return tf_pack(TF_OOM, sizeof(TF_OOM) - 1);
    }
    s = JS_ToCStringLen(tf_ctx, &len, json);
    JS_FreeValue(tf_ctx, json);
    if (!s)
        return tf_pack(TF_OOM, sizeof(TF_OOM) - 1);
    tf_result = malloc(len);
    if (!tf_result) {
        JS_FreeCString(tf_ctx, s);
        return tf_pack(TF_OOM, sizeof(TF_OOM) - 1);
    }
    memcpy(tf_result, s, len);
    JS_FreeCString(tf_ctx, s);
    return tf_pack(tf_result, len);
}

static uint64_t tf_fail_with(JSValue err) {
    JSValue fail = tf_hook("fail");
    JSValue r = JS_Call(tf_ctx, fail, JS_UNDEFINED, 1, (JSValueConst *)&err);
    JS_FreeValue(tf_ctx, fail);
    JS_FreeValue(tf_ctx, err);
    return tf_finish(r);
}

static uint64_t tf_fail_pending(void) { return tf_fail_with(JS_GetException(tf_ctx)); }

static uint64_t tf_fail_state(int state) {
    tf_end_state = (uint32_t)state;
    JSValue v = JS_NewInt32(tf_ctx, state == 2 ? -2 : -1);
    return tf_fail_with(v);
}

/* Run one tool module: evaluate it, then hand its namespace to the prelude's invoke(), which
 * calls handler(args) or takes the default export. Returns (ptr << 32) | len of a JSON answer. */
__attribute__((export_name("tf_run"))) uint64_t tf_run(const char *code, size_t code_len,
                                                      const char *args, size_t args_len,
                                                      uint64_t seed, double budget_ms) {
    JSValue fn, evaluated, ns, invoke, argv[2], done;
    JSModuleDef *m;
    int state;
    JS_UpdateStackTop(tf_rt);
    tf_ctx->random_state = seed ? seed : 1;
    fn = JS_Eval(tf_ctx, code, code_len, "tool.js", JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    if (JS_IsException(fn))
        return tf_fail_pending();
    m = JS_VALUE_GET_PTR(fn);
    evaluated = JS_EvalFunction(tf_ctx, fn);
    if (JS_IsException(evaluated))
        return tf_fail_pending();
    state = tf_pump(evaluated, budget_ms);
    if (state != 0) {
        JS_FreeValue(tf_ctx, evaluated);
        return tf_fail_state(state);
    }
    if (JS_PromiseState(tf_ctx, evaluated) == JS_PROMISE_REJECTED) {
        JSValue reason = JS_PromiseResult(tf_ctx, evaluated);
        JS_FreeValue(tf_ctx, evaluated);
        return tf_fail_with(reason);
    }
    JS_FreeValue(tf_ctx, evaluated);
    ns = JS_GetModuleNamespace(tf_ctx, m);
    if (JS_IsException(ns))
        return tf_fail_pending();
    invoke = tf_hook("invoke");
    argv[0] = ns;
    argv[1] = JS_NewStringLen(tf_ctx, args, args_len);
    done = JS_Call(tf_ctx, invoke, JS_UNDEFINED, 2, argv);
    JS_FreeValue(tf_ctx, invoke);
    JS_FreeValue(tf_ctx, argv[0]);
    JS_FreeValue(tf_ctx, argv[1]);
    if (JS_IsException(done))
        return tf_fail_pending();
    state = tf_pump(done, budget_ms);
    if (state != 0) {
        JS_FreeValue(tf_ctx, done);
        return tf_fail_state(state);
    }
    /* invoke() never rejects: it resolves to the JSON answer string */
    JSValue answer = JS_PromiseResult(tf_ctx, done);
    int rejected = JS_PromiseState(tf_ctx, done) == JS_PROMISE_REJECTED;
    JS_FreeValue(tf_ctx, done);
    return rejected ? tf_fail_with(answer) : tf_finish(answer);
}
