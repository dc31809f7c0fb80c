/* kernels/registry.c: the built-in kernels, and kernels loaded from
 * shared objects (--kernels lib.so) that export cubesim_kernels. */
#include <dlfcn.h>
#include <string.h>

#include "tl/tl_int.h"

extern const struct tl_kernel tl_kernel_noop;
extern const struct tl_kernel tl_kernel_program_ids;
extern const struct tl_kernel tl_kernel_gemm;
extern const struct tl_kernel tl_kernel_softmax;
extern const struct tl_kernel tl_kernel_gemm_epilogue;
extern const struct tl_kernel tl_kernel_gqa_decode;
extern const struct tl_kernel tl_kernel_gqa_decode_short;
extern const struct tl_kernel tl_kernel_gqa_decode_opt3;
extern const struct tl_kernel tl_kernel_gqa_decode_opt2;
extern const struct tl_kernel tl_kernel_gqa_prefill;
extern const struct tl_kernel tl_kernel_gqa_prefill_short;

const struct tl_kernel *const tl_builtin_kernels[] = {
        &tl_kernel_noop,
        &tl_kernel_program_ids,
        &tl_kernel_gemm,
        &tl_kernel_softmax,
        &tl_kernel_gemm_epilogue,
        &tl_kernel_gqa_decode,
        &tl_kernel_gqa_decode_short,
        &tl_kernel_gqa_decode_opt3,
        &tl_kernel_gqa_decode_opt2,
        &tl_kernel_gqa_prefill,
        &tl_kernel_gqa_prefill_short,
        NULL,
};

#define MAX_LOADED 256
static const struct tl_kernel *loaded[MAX_LOADED]; /* from shared objects, in load order */
static size_t n_loaded;

const struct tl_kernel *tl_kernel_at(size_t i)
{
        size_t n_builtin = sizeof tl_builtin_kernels / sizeof tl_builtin_kernels[0] - 1;
        if (i < n_builtin)
                return tl_builtin_kernels[i];
        i -= n_builtin;
        return i < n_loaded ? loaded[i] : NULL;
}

const struct tl_kernel *tl_kernel_find(const char *name)
{
        /* Loaded kernels shadow built-ins of the same name: search them first. */
        for (size_t i = n_loaded; i-- > 0;)
                if (strcmp(loaded[i]->name, name) == 0)
                        return loaded[i];
        for (const struct tl_kernel *const *k = tl_builtin_kernels; *k; k++)
                if (strcmp((*k)->name, name) == 0)
                        return *k;
        return NULL;
}

int tl_kernels_load(const char *path, struct diag *d)
{
        /* dlopen needs a path with a slash to skip the library search. */
        char buf[4096];
        if (!strchr(path, '/')) {
                snprintf(buf, sizeof buf, "./%s", path);
                path = buf;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                diag_error_at(d, path, 0, 0, "cannot load kernels: %s", dlerror());
                return -1;
        }
        const struct tl_kernel *const *list = dlsym(h, TL_KERNELS_SYMBOL);
        if (!list) {
                diag_error_at(d, path, 0, 0,
                              "no symbol '%s': a kernel library exports "
                              "const struct tl_kernel *const %s[] = { &k, ..., NULL };",
                              TL_KERNELS_SYMBOL, TL_KERNELS_SYMBOL);
                dlclose(h);
                return -1;
        }
        size_t n = 0;
        for (; list[n]; n++) {
                if (n_loaded == MAX_LOADED) {
                        diag_error_at(d, path, 0, 0, "more than %d loaded kernels", MAX_LOADED);
                        return -1;
                }
                if (!list[n]->name || !list[n]->fn) {
                        diag_error_at(d, path, 0, 0, "%s[%zu] has no name or no body",
                                      TL_KERNELS_SYMBOL, n);
                        return -1;
                }
                loaded[n_loaded++] = list[n];
        }
        if (n == 0)
                diag_error_at(d, path, 0, 0, "%s is empty", TL_KERNELS_SYMBOL);
        /* The handle stays open: the kernels live in it for the run. */
        return n ? 0 : -1;
}
